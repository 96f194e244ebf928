import Foundation
import Testing
@testable import Vouch

/// Paths and loaders shared by the library tests.
enum TestVectors {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let directory = root.appendingPathComponent("TestVectors")

    static func url(_ path: String) -> URL { directory.appendingPathComponent(path) }

    static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: url(path)))
    }

    static func text(_ path: String) throws -> String {
        String(decoding: try bytes(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func json(_ path: String) throws -> JSONValue {
        try StrictJSON.parse(try bytes(path), limits: .init(maximumDepth: 64))
    }

    /// Files of a folder, sorted by name.
    static func files(in folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url(folder).path).sorted().map { "\(folder)/\($0)" }
    }

    /// The real Apple tokens, by file name.
    static func realTokens() throws -> [(name: String, token: String)] {
        try files(in: "apple-real/real").map { ($0, try text($0)) }
    }

    static func certificateDER(_ path: String) throws -> [UInt8] {
        let found = CertificateFile.certificates(in: try bytes(path))
        guard let first = found.first else { throw TestFailure("no certificate in \(path)") }
        return first
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Verifier {
    /// The code a token is rejected with, or `nil` when it verifies.
    func rejection(_ token: String, as kind: PayloadKind? = nil) -> VerificationError? {
        do {
            _ = try verify(token, as: kind)
            return nil
        } catch {
            return error
        }
    }
}

/// Builds test tokens by hand: segments are encoded exactly as given.
enum TokenParts {
    static func segments(_ token: String) -> [String] {
        token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    static func encode(_ text: String) -> String {
        String(decoding: Base64.encodeURL(Array(text.utf8)), as: UTF8.self)
    }

    static func decode(_ segment: String) -> String {
        String(decoding: Base64.decodeURL(Array(segment.utf8)) ?? [], as: UTF8.self)
    }

    /// The token with its header JSON object replaced by `transform(header)`.
    static func replacingHeader(of token: String, _ transform: (inout JSONObject) -> Void) throws -> String {
        var parts = segments(token)
        var header = try StrictJSON.parseObject(Array(decode(parts[0]).utf8))
        transform(&header)
        parts[0] = encode(JSONWriter.string(.object(header)))
        return parts.joined(separator: ".")
    }
}
