internal import VouchOpenSSL

/// A token parsed up to its signature check: its signer, decoded payload and signature, and
/// the SHA-256 digest of its signing input (signature and digest inline: no allocation).
struct PreparedToken {
    let signer: Signer
    let payload: [UInt8]
    /// `r‖s`, 32 bytes each, big-endian.
    let signature: SIMD64<UInt8>
    let digest: SIMD32<UInt8>
}

extension Verifier {
    /// Verifies several tokens given as UTF-8 bytes and returns one result per token, in
    /// order, each the one `verify(bytes:as:)` gives for that token alone.
    ///
    /// Tokens signed by the same key share the signature work: once the key has signed
    /// enough tokens (see ``Configuration/fastVerify``) their signatures are verified
    /// together with the key's precomputed table. A batch driver hands each thread a chunk.
    public func verifyChunk(
        _ tokens: [ArraySlice<UInt8>], as kind: PayloadKind? = nil
    ) -> [Result<VerifiedPayload, VerificationError>] {
        engine.verifyChunk(tokens, kind: kind, expectations: Expectations(configuration.trust), now: Self.clock())
    }

    /// ``verifyChunk(_:as:)`` for tokens given as strings, each one's UTF-8 read in place (a
    /// native string is not copied); for `BatchVerifier`'s `verify` and `verifyAll`.
    package func verifyChunk(strings tokens: [String], as kind: PayloadKind? = nil)
        -> [Result<VerifiedPayload, VerificationError>]
    {
        engine.verifyChunk(
            tokens.map(\.utf8), kind: kind, expectations: Expectations(configuration.trust), now: Self.clock())
    }
}

extension Engine {
    /// Everything before the signature check: the compact form, the header (cached signer),
    /// canonical base64url of payload and signature, the signature's length.
    ///
    /// - Parameter recent: the signer of the chunk's previous token, compared first (its
    ///   header bytes are immutable, so without the cache's lock); updated to this token's.
    func prepare(_ bytes: UnsafeBufferPointer<UInt8>, recent: inout Signer?) throws(VerificationError)
        -> PreparedToken
    {
        let jws = try CompactJWS(locatingIn: bytes, maximumSize: maximumTokenSize)
        let header = UnsafeBufferPointer(rebasing: bytes[jws.header])
        let signer: Signer
        if let recent, recent.hasSegment(header) {
            signer = recent
        } else {
            signer = try self.signer(forHeader: header)
            recent = signer
        }

        let payloadBytes = try Self.payload(UnsafeBufferPointer(rebasing: bytes[jws.payload]))
        let signature = try Self.signature(UnsafeBufferPointer(rebasing: bytes[jws.signature]))
        let raw = UnsafeRawBufferPointer(bytes)
        let digest = signer.headerDigest.digest(
            payload: UnsafeRawBufferPointer(rebasing: raw[jws.payload]),
            signingInput: UnsafeRawBufferPointer(rebasing: raw[jws.signingInput]))
        return PreparedToken(signer: signer, payload: payloadBytes, signature: signature, digest: digest)
    }

    /// Whether each token's signature verifies with `signer`'s key: through the key's
    /// precomputed table once it is built, else (or should OpenSSL fail there) through
    /// `EVP_PKEY_verify`; `nil` where OpenSSL gave no verdict at all.
    func signaturesHold(_ tokens: [PreparedToken], signer: Signer) -> [Bool?] {
        if let threshold = fixedKeys.threshold,
            let fixed = signer.fixedKey.key(for: signer.key, counting: tokens.count, threshold: threshold)
        {
            var digests: [UInt8] = []
            var signatures: [UInt8] = []
            digests.reserveCapacity(32 * tokens.count)
            signatures.reserveCapacity(64 * tokens.count)
            for token in tokens {
                withUnsafeBytes(of: token.digest) { digests.append(contentsOf: $0) }
                withUnsafeBytes(of: token.signature) { signatures.append(contentsOf: $0) }
            }
            let verdicts = digests.withUnsafeBytes { digests in
                signatures.withUnsafeBytes { signatures in
                    fixed.verify(digests: digests, signatures: signatures, count: tokens.count)
                }
            }
            if let verdicts { return verdicts }
        }
        return tokens.map { token in
            withUnsafeBytes(of: token.signature) { signature in
                withUnsafeBytes(of: token.digest) { ES256.check(signature: signature, digest: $0, key: signer.key) }
            }
        }
    }

    /// Verifies `tokens` with the verdicts of one-by-one verification; the signatures of the
    /// tokens that share a signer are checked together.
    func verifyChunk<Token: Collection<UInt8>>(
        _ tokens: [Token], kind: PayloadKind?, expectations: Expectations, now: Int64
    ) -> [Result<VerifiedPayload, VerificationError>] {
        var results: [Result<VerifiedPayload, VerificationError>?] = Array(repeating: nil, count: tokens.count)
        var prepared: [PreparedToken?] = Array(repeating: nil, count: tokens.count)
        // Positions by signer, in order of first appearance.
        var groups: [(signer: Signer, positions: [Int])] = []
        var recent: Signer? = nil
        let attempt = { (bytes: UnsafeBufferPointer<UInt8>) in
            Result { () throws(VerificationError) in try self.prepare(bytes, recent: &recent) }
        }
        for (position, token) in tokens.enumerated() {
            // A native string's UTF-8 and an array's bytes are read in place.
            let outcome =
                token.withContiguousStorageIfAvailable(attempt) ?? Array(token).withUnsafeBufferPointer(attempt)
            switch outcome {
            case .failure(let error):
                results[position] = .failure(error)
            case .success(let token):
                prepared[position] = token
                if let group = groups.firstIndex(where: { $0.signer === token.signer }) {
                    groups[group].positions.append(position)
                } else {
                    groups.append((token.signer, [position]))
                }
            }
        }
        for (signer, positions) in groups {
            let holds = signaturesHold(positions.map { prepared[$0]! }, signer: signer)
            for (position, holds) in zip(positions, holds) where holds != true {
                do throws(VerificationError) {
                    try Self.signatureVerdict(holds)
                } catch {
                    results[position] = .failure(error)
                }
                prepared[position] = nil
            }
        }
        var memo = ValidationMemo()
        for position in tokens.indices {
            guard let token = prepared[position] else { continue }
            results[position] = Result { () throws(VerificationError) in
                try finish(token, kind: kind, expectations: expectations, now: now, memo: &memo)
            }
        }
        return results.map { $0! }
    }
}
