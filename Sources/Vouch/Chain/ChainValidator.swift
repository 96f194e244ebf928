internal import COpenSSL

/// RFC 5280 path validation by OpenSSL (`X509_verify_cert`) from a leaf and one untrusted
/// intermediate to the configured trust anchors, at a given instant.
///
/// `x5c[2]` never takes part: the path must end at one of *our* anchors. Partial chains are
/// never allowed, so a trusted non-root certificate cannot anchor a path.
final class ChainValidator: @unchecked Sendable {
    /// The window in which a validated path stays valid: the intersection of the validity of
    /// leaf, intermediate and anchor, in seconds since 1970 (`notBefore ..< notAfter`).
    struct Window: Sendable, Equatable {
        var notBefore: Int64
        var notAfter: Int64

        /// Whether `time` is safely inside, a second away from either edge, so that a cached
        /// result agrees with OpenSSL's own comparison whatever its rounding at the edges.
        func strictlyContains(_ time: Int64) -> Bool {
            time > notBefore && time < notAfter - 1
        }
    }

    private let store: OpaquePointer
    let anchors: [Certificate]
    let strict: Bool

    /// - Parameter strict: adds OpenSSL's `X509_V_FLAG_X509_STRICT` (RFC 5280 profile checks
    ///   such as critical basicConstraints on CAs and key identifiers). Apple's production chain
    ///   passes it; Apple's own test root does not.
    init(anchors: [Certificate], strict: Bool) {
        // The store holds its own reference to each anchor (X509_STORE_add_cert up-refs).
        store = X509_STORE_new()!
        for anchor in anchors {
            X509_STORE_add_cert(store, anchor.pointer)
        }
        self.anchors = anchors
        self.strict = strict
    }

    deinit {
        X509_STORE_free(store)
    }

    /// Validates `leaf ← intermediate ← anchor` at `time` (seconds since 1970) and returns the
    /// validity window of the path found.
    func validate(leaf: Certificate, intermediate: Certificate, at time: Int64) throws(VerificationError) -> Window {
        try validatePath(leaf: leaf, untrusted: [intermediate], at: time) { chain throws(VerificationError) in
            // The path must be exactly leaf, our intermediate, an anchor.
            guard vouch_sk_X509_num(chain) == 3, X509_cmp(vouch_sk_X509_value(chain, 1), intermediate.pointer) == 0,
                let anchorPointer = vouch_sk_X509_value(chain, 2),
                let anchor = anchors.first(where: { X509_cmp($0.pointer, anchorPointer) == 0 })
            else {
                throw VerificationError(.untrustedChain, "the path is not leaf, x5c intermediate, trusted root")
            }
            let certificates = [leaf, intermediate, anchor]
            let notBefore = certificates.compactMap(\.notBefore).max() ?? .min
            let notAfter = certificates.compactMap(\.notAfter).min() ?? .max
            return Window(notBefore: notBefore, notAfter: notAfter)
        }
    }

    /// RFC 5280 path validation alone: from `leaf` through any of `untrusted` to an anchor at
    /// `time`, with no rule on the path's shape. `inspect` sees the path OpenSSL built (leaf
    /// first, a `STACK_OF(X509)` borrowed from the context) while it is alive.
    func validatePath<Result>(
        leaf: Certificate, untrusted certificates: [Certificate], at time: Int64,
        inspect: (OpaquePointer) throws(VerificationError) -> Result
    ) throws(VerificationError) -> Result {
        guard let context = X509_STORE_CTX_new() else {
            throw VerificationError(.internalError, "cannot allocate the chain check (X509_STORE_CTX_new)")
        }
        defer { X509_STORE_CTX_free(context) }
        // The stack borrows the certificates; freeing the stack leaves them alone.
        let untrusted = vouch_sk_X509_new_null()
        defer { vouch_sk_X509_free(untrusted) }
        for certificate in certificates {
            vouch_sk_X509_push(untrusted, certificate.pointer)
        }
        guard X509_STORE_CTX_init(context, store, leaf.pointer, untrusted) == 1 else {
            ERR_clear_error()
            throw VerificationError(.internalError, "cannot initialise the chain check (X509_STORE_CTX_init)")
        }
        let parameters = X509_STORE_CTX_get0_param(context)
        X509_VERIFY_PARAM_set_time(parameters, time_t(time))
        if strict {
            X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_X509_STRICT))
        }
        let verified = X509_verify_cert(context)
        defer { ERR_clear_error() }
        guard verified == 1 else {
            let code = X509_STORE_CTX_get_error(context)
            let depth = X509_STORE_CTX_get_error_depth(context)
            let text = String(cString: X509_verify_cert_error_string(Int(code)))
            let which = ["leaf", "intermediate", "root"][min(max(Int(depth), 0), 2)]
            switch code {
            case X509_V_ERR_CERT_HAS_EXPIRED:
                throw VerificationError(.certificateExpired, "\(which) certificate: \(text) (validation time \(Self.iso8601(time)))")
            case X509_V_ERR_CERT_NOT_YET_VALID:
                throw VerificationError(.certificateNotYetValid, "\(which) certificate: \(text) (validation time \(Self.iso8601(time)))")
            default:
                throw VerificationError(.untrustedChain, "\(which) certificate: \(text) (OpenSSL error \(code))")
            }
        }
        // get0: the path belongs to the context, alive until the deferred free above.
        guard let chain = X509_STORE_CTX_get0_chain(context) else {
            throw VerificationError(.untrustedChain, "OpenSSL reported no path")
        }
        return try inspect(chain)
    }

    static func iso8601(_ seconds: Int64) -> String {
        Timestamp(milliseconds: seconds * 1000).iso8601
    }
}
