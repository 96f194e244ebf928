internal import CVouchECDSA

/// SHA-256 of whole messages, through the one C function that hashes them
/// (`vouch_sha256`: OpenSSL's low-level API, which costs a fifth of its one-shot `SHA256()` on
/// a short message such as a stored record's columns).
package enum SHA256Digest {
    package static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            _ = vouch_sha256(buffer.baseAddress, buffer.count, &digest)
        }
        if done == nil {
            let copy = Array(bytes)
            _ = vouch_sha256(copy, copy.count, &digest)
        }
        return digest
    }

    /// Writes SHA-256(`message`) into the first 32 bytes of `digest`.
    package static func hash(_ message: UnsafeRawBufferPointer, into digest: UnsafeMutableRawBufferPointer) {
        precondition(digest.count >= 32)
        _ = vouch_sha256(
            message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count,
            digest.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }
}
