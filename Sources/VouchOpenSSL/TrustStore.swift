internal import COpenSSL

/// Owns an `X509_STORE` holding the trust anchors, and runs OpenSSL's RFC 5280 path
/// validation (`X509_verify_cert`) against it. Read-only after init, so shared across threads;
/// each validation has its own `X509_STORE_CTX`.
package final class TrustStore: @unchecked Sendable {
    private let store: OpaquePointer
    package let anchors: [Certificate]

    /// What path validation found.
    package enum Outcome {
        /// A path to an anchor: leaf first, each entry the certificate given (leaf, an untrusted
        /// one or an anchor) with the same content, `nil` for one OpenSSL found elsewhere.
        case valid(path: [Certificate?])
        /// No valid path: OpenSSL's `X509_V_ERR_…` code, the depth it applies to (0 is the
        /// leaf) and its text.
        case invalid(Failure, code: Int, depth: Int, text: String)
        /// The check could not run (allocation or set-up failure): what failed.
        case notRun(String)
        /// OpenSSL verified but handed back no path.
        case noPath
    }

    /// The verification errors callers tell apart.
    package enum Failure: Sendable {
        case expired, notYetValid, other
    }

    package init(anchors: [Certificate]) {
        let store = X509_STORE_new()!
        for anchor in anchors {
            // The store takes its own reference to each anchor (X509_STORE_add_cert up-refs).
            anchor.withUnsafePointer { _ = X509_STORE_add_cert(store, $0) }
        }
        self.store = store
        self.anchors = anchors
    }

    deinit {
        X509_STORE_free(store)
    }

    /// Validates from `leaf` through any of `untrusted` to an anchor at `time` (seconds since
    /// 1970). Partial chains are never allowed, so a trusted non-root cannot anchor a path.
    /// - Parameter strict: adds `X509_V_FLAG_X509_STRICT` (RFC 5280 profile checks).
    package func validate(leaf: Certificate, untrusted certificates: [Certificate], at time: Int64, strict: Bool)
        -> Outcome
    {
        guard let context = X509_STORE_CTX_new() else {
            return .notRun("cannot allocate the chain check (X509_STORE_CTX_new)")
        }
        defer { X509_STORE_CTX_free(context) }
        // The stack borrows the certificates (held by `certificates` for this call); freeing
        // the stack leaves them alone.
        guard let untrusted = vouch_sk_X509_new_null() else {
            return .notRun("cannot allocate the chain check (sk_X509_new_null)")
        }
        defer { vouch_sk_X509_free(untrusted) }
        defer { withExtendedLifetime(certificates) {} }
        for certificate in certificates {
            certificate.withUnsafePointer { _ = vouch_sk_X509_push(untrusted, $0) }
        }
        return leaf.withUnsafePointer { leafPointer -> Outcome in
            guard X509_STORE_CTX_init(context, store, leafPointer, untrusted) == 1 else {
                OpenSSLError.drain()
                return .notRun("cannot initialise the chain check (X509_STORE_CTX_init)")
            }
            // get0: the parameters belong to the context.
            let parameters = X509_STORE_CTX_get0_param(context)
            X509_VERIFY_PARAM_set_time(parameters, time_t(time))
            if strict {
                X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_X509_STRICT))
            }
            let verified = X509_verify_cert(context)
            defer { OpenSSLError.drain() }
            guard verified == 1 else {
                let code = X509_STORE_CTX_get_error(context)
                let failure: Failure =
                    switch code {
                    case X509_V_ERR_CERT_HAS_EXPIRED: .expired
                    case X509_V_ERR_CERT_NOT_YET_VALID: .notYetValid
                    default: .other
                    }
                return .invalid(
                    failure, code: Int(code), depth: Int(X509_STORE_CTX_get_error_depth(context)),
                    text: String(cString: X509_verify_cert_error_string(Int(code))))
            }
            // get0: the path belongs to the context, alive until the deferred free above.
            guard let chain = X509_STORE_CTX_get0_chain(context) else { return .noPath }
            let candidates = [leaf] + certificates + anchors
            let path = (0..<vouch_sk_X509_num(chain)).map { index -> Certificate? in
                let found = vouch_sk_X509_value(chain, index)
                return candidates.first { candidate in candidate.withUnsafePointer { X509_cmp($0, found) == 0 } }
            }
            return .valid(path: path)
        }
    }
}
