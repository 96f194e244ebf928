internal import COpenSSL

/// An OpenSSL operation that failed: the step that failed and the reasons OpenSSL queued.
package struct OpenSSLError: Error, Sendable, CustomStringConvertible {
    /// The OpenSSL function (or step) that failed, such as `X509_sign`.
    package var step: String
    /// OpenSSL's reason strings, oldest first ("unsupported algorithm", …).
    package var reasons: [String]

    /// The failure of `step`, with the error queue drained: the next failure starts clean.
    package init(_ step: String) {
        self.step = step
        self.reasons = Self.drain()
    }

    package var description: String {
        step + " failed" + (reasons.isEmpty ? "" : " (" + reasons.joined(separator: "; ") + ")")
    }

    /// Empties this thread's OpenSSL error queue and returns each entry's reason string (the
    /// library's own text when OpenSSL has none, then the packed code).
    @discardableResult
    package static func drain() -> [String] {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if let reason = ERR_reason_error_string(code) {
                reasons.append(String(cString: reason))
            } else {
                var buffer = [CChar](repeating: 0, count: 256)
                ERR_error_string_n(code, &buffer, buffer.count)
                reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
        }
        return reasons
    }
}
