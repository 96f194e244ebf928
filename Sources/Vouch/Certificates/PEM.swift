package import VouchOpenSSL

/// Minimal PEM reading: the base64 body between `-----BEGIN label-----` and `-----END label-----`.
package enum PEM {
    package static func firstBlock(labelled label: String, in bytes: [UInt8]) -> [UInt8]? {
        blocks(labelled: label, in: bytes).first
    }

    package static func blocks(labelled label: String, in bytes: [UInt8]) -> [[UInt8]] {
        guard let text = String(validating: bytes, as: UTF8.self) else { return [] }
        let begin = "-----BEGIN \(label)-----"
        let end = "-----END \(label)-----"
        var result: [[UInt8]] = []
        var rest = Substring(text)
        while let start = rest.firstRange(of: begin), let stop = rest[start.upperBound...].firstRange(of: end) {
            let body = rest[start.upperBound..<stop.lowerBound].utf8.filter { !$0.isASCIIWhitespace }
            guard let der = Base64.decodeStandard(body) else { return result }
            result.append(der)
            rest = rest[stop.upperBound...]
        }
        return result
    }
}

extension UInt8 {
    package var isASCIIWhitespace: Bool { self == 0x20 || self == 0x0A || self == 0x0D || self == 0x09 }
}

extension Certificate {
    /// Parses a DER or PEM file's contents (PEM: the first `CERTIFICATE` block).
    package convenience init?(derOrPEM bytes: [UInt8]) {
        if let der = PEM.firstBlock(labelled: "CERTIFICATE", in: bytes) {
            self.init(der: der)
        } else {
            self.init(der: bytes)
        }
    }

    /// Every certificate in a DER or PEM file's contents: the one DER certificate, or each
    /// PEM `CERTIFICATE` block. Empty when any of them does not parse.
    package static func all(inDERorPEM bytes: [UInt8]) -> [Certificate] {
        let blocks = PEM.blocks(labelled: "CERTIFICATE", in: bytes)
        let parsed = (blocks.isEmpty ? [bytes] : blocks).map { Certificate(der: $0) }
        return parsed.contains(where: { $0 == nil }) ? [] : parsed.compactMap { $0 }
    }
}
