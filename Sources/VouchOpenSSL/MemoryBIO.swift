internal import COpenSSL

/// Owns one OpenSSL memory `BIO`, the buffer PEM reading and writing go through.
final class MemoryBIO {
    private let pointer: OpaquePointer

    /// An empty, writable memory BIO.
    init() throws(OpenSSLError) {
        guard let pointer = BIO_new(BIO_s_mem()) else { throw OpenSSLError("BIO_new") }
        self.pointer = pointer
    }

    deinit {
        BIO_free(pointer)
    }

    /// Runs `body` with the BIO, borrowed for the call.
    func withUnsafePointer<R>(_ body: (OpaquePointer) throws(OpenSSLError) -> R) throws(OpenSSLError) -> R {
        try body(pointer)
    }

    /// Runs `body` with a read-only BIO over `bytes`; the BIO borrows the bytes only for the call.
    static func reading<R>(_ bytes: [UInt8], _ body: (OpaquePointer) -> R) throws(OpenSSLError) -> R {
        let result: R? = bytes.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            return body(bio)
        }
        guard let result else { throw OpenSSLError("BIO_new_mem_buf") }
        return result
    }

    /// A copy of everything written so far.
    var contents: [UInt8] {
        var data: UnsafeMutablePointer<CChar>? = nil
        // get0-style: `data` stays owned by the BIO; it is copied before the BIO changes.
        let length = vouch_BIO_get_mem_data(pointer, &data)
        guard let data, length > 0 else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }
}
