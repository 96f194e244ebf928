package import VouchOpenSSL

/// RFC 5280 path validation by OpenSSL (`X509_verify_cert`) from a leaf and one untrusted
/// intermediate to the configured trust anchors, at a given instant.
///
/// `x5c[2]` never takes part: the path must end at one of *our* anchors. Partial chains are
/// never allowed, so a trusted non-root certificate cannot anchor a path.
package final class ChainValidator: Sendable {
    /// The window in which a validated path stays valid: the intersection of the validity of
    /// leaf, intermediate and anchor, in seconds since 1970 (`notBefore ..< notAfter`).
    package struct Window: Sendable, Equatable {
        package var notBefore: Int64
        package var notAfter: Int64

        package init(notBefore: Int64, notAfter: Int64) {
            self.notBefore = notBefore
            self.notAfter = notAfter
        }

        /// Whether `time` is safely inside, a second away from either edge, so that a cached
        /// result agrees with OpenSSL's own comparison whatever its rounding at the edges.
        package func strictlyContains(_ time: Int64) -> Bool {
            time > notBefore && time < notAfter - 1
        }
    }

    private let store: TrustStore
    package var anchors: [Certificate] { store.anchors }
    let strict: Bool

    /// - Parameter strict: adds OpenSSL's `X509_V_FLAG_X509_STRICT` (RFC 5280 profile checks
    ///   such as critical basicConstraints on CAs and key identifiers). Apple's production chain
    ///   passes it; Apple's own test root does not.
    package init(anchors: [Certificate], strict: Bool) {
        store = TrustStore(anchors: anchors)
        self.strict = strict
    }

    /// Validates `leaf ← intermediate ← anchor` at `time` (seconds since 1970) and returns the
    /// validity window of the path found.
    package func validate(leaf: Certificate, intermediate: Certificate, at time: Int64) throws(VerificationError)
        -> Window
    {
        try validatePath(leaf: leaf, untrusted: [intermediate], at: time) { path throws(VerificationError) in
            // The path must be exactly leaf, our intermediate, an anchor.
            guard path.count == 3, path[1]?.isSame(as: intermediate) == true, let root = path[2],
                let anchor = anchors.first(where: { $0.isSame(as: root) })
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
    /// `time`, with no rule on the path's shape. `inspect` sees the path OpenSSL built, leaf
    /// first (see ``TrustStore/Outcome/valid(path:)``).
    package func validatePath<Result>(
        leaf: Certificate, untrusted certificates: [Certificate], at time: Int64,
        inspect: ([Certificate?]) throws(VerificationError) -> Result
    ) throws(VerificationError) -> Result {
        switch store.validate(leaf: leaf, untrusted: certificates, at: time, strict: strict) {
        case .valid(let path):
            return try inspect(path)
        case .notRun(let reason):
            throw VerificationError(.internalError, reason)
        case .noPath:
            throw VerificationError(.untrustedChain, "OpenSSL reported no path")
        case .invalid(let failure, let code, let depth, let text):
            let which = ["leaf", "intermediate", "root"][min(max(depth, 0), 2)]
            switch failure {
            case .expired:
                throw VerificationError(
                    .certificateExpired, "\(which) certificate: \(text) (validation time \(Self.iso8601(time)))")
            case .notYetValid:
                throw VerificationError(
                    .certificateNotYetValid, "\(which) certificate: \(text) (validation time \(Self.iso8601(time)))")
            case .other:
                throw VerificationError(.untrustedChain, "\(which) certificate: \(text) (OpenSSL error \(code))")
            }
        }
    }

    package static func iso8601(_ seconds: Int64) -> String {
        Timestamp(milliseconds: seconds * 1000).iso8601
    }
}
