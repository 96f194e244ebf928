/// Just enough DER (and BER) writing for receipts and their CMS container.
enum ReceiptDER {
    static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    /// A TLV: definite length, or indefinite with end-of-contents octets (`ber`, constructed tags only).
    static func tlv(_ tag: UInt8, _ contents: [UInt8], ber: Bool = false) -> [UInt8] {
        if ber && tag & 0x20 != 0 { return [tag, 0x80] + contents + [0, 0] }
        return [tag] + length(contents.count) + contents
    }

    static func sequence(_ parts: [[UInt8]], ber: Bool = false) -> [UInt8] { tlv(0x30, parts.flatMap { $0 }, ber: ber) }
    static func set(_ parts: [[UInt8]], ber: Bool = false) -> [UInt8] { tlv(0x31, parts.flatMap { $0 }, ber: ber) }
    static func octetString(_ bytes: [UInt8]) -> [UInt8] { tlv(0x04, bytes) }
    static func utf8String(_ text: String) -> [UInt8] { tlv(0x0C, Array(text.utf8)) }
    static func ia5String(_ text: String) -> [UInt8] { tlv(0x16, Array(text.utf8)) }
    static let null: [UInt8] = [0x05, 0x00]

    static func integer(_ value: Int64) -> [UInt8] {
        var bytes = withUnsafeBytes(of: value.bigEndian) { Array($0) }
        while bytes.count > 1, (bytes[0] == 0 && bytes[1] & 0x80 == 0) || (bytes[0] == 0xFF && bytes[1] & 0x80 != 0) {
            bytes.removeFirst()
        }
        return tlv(0x02, bytes)
    }

    static func oid(_ encoded: [UInt8]) -> [UInt8] { tlv(0x06, encoded) }

    /// Sorts encodings as DER orders a SET OF: by their bytes, a shorter prefix first.
    static func derSorted(_ elements: [[UInt8]]) -> [[UInt8]] {
        elements.sorted { $0.lexicographicallyPrecedes($1) }
    }
}
