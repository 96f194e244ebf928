internal import COpenSSL

enum SHA256Digest {
    static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            _ = SHA256(buffer.baseAddress, buffer.count, &digest)
        }
        if done == nil {
            let copy = Array(bytes)
            _ = SHA256(copy, copy.count, &digest)
        }
        return digest
    }
}
