internal import COpenSSL

extension MintError {
    /// An ``MintError/Code/openSSLFailure`` naming the failed step, with OpenSSL's queued
    /// error messages (the queue is drained so the next failure starts clean).
    static func openSSL(_ step: String) -> MintError {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        let detail = messages.isEmpty ? "" : " (" + messages.joined(separator: "; ") + ")"
        return MintError(.openSSLFailure, step + " failed" + detail)
    }
}
