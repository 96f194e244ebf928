internal import COpenSSL

package enum DER {
    /// Runs an OpenSSL `d2i_…` parser over `der` and keeps the result only when it consumed
    /// every byte: `d2i` functions silently ignore trailing data. The caller owns the result.
    package static func parseWhole(
        _ der: [UInt8], with parse: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> OpaquePointer?,
        free: (OpaquePointer) -> Void
    ) -> OpaquePointer? {
        guard !der.isEmpty else { return nil }
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            guard let object = parse(&cursor, buffer.count) else { return nil }
            guard cursor == buffer.baseAddress! + buffer.count else {
                free(object)
                return nil
            }
            return object
        }
        if parsed == nil { ERR_clear_error() }
        return parsed
    }
}
