@testable internal import Vouch
@testable internal import VouchBatch
@testable internal import VouchOpenSSL

/// The strict JSON layer on arbitrary bytes, with a small depth limit so that it is reached.
///
/// Properties: what is accepted is valid UTF-8 without a byte-order mark; writing the value
/// back gives a document that parses to the same value and writes to the same bytes.
func fuzzStrictJSON(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    let value: JSONValue
    do {
        value = try StrictJSON.parse(bytes, limits: .init(maximumDepth: 16))
    } catch {
        return
    }
    require(String(validating: bytes, as: UTF8.self) != nil, "accepted invalid UTF-8")
    require(!bytes.starts(with: [0xEF, 0xBB, 0xBF]), "accepted a byte-order mark")
    let written = JSONWriter.encode(value)
    let reparsed: JSONValue
    do {
        reparsed = try StrictJSON.parse(written, limits: .init(maximumDepth: 16))
    } catch {
        fatalError("property broken: the writer's output does not parse: \(error)")
    }
    require(reparsed == value, "the written document parses to another value")
    require(JSONWriter.encode(reparsed) == written, "writing is not stable")
}
