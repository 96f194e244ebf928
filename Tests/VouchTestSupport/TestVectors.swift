public import Foundation
public import Testing
public import Vouch

/// A folder of test vectors, read by relative path.
public protocol VectorFolder {
    /// The folder the relative paths start from.
    static var root: URL { get }
}

/// The package root, found from this file's path.
public let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()  // VouchTestSupport
    .deletingLastPathComponent()  // Tests
    .deletingLastPathComponent()

/// Data the project makes itself and commits: `TestVectors/` (minted corpora, `apple-real/`).
public enum TestVectors: VectorFolder {
    public static let root = packageRoot.appendingPathComponent("TestVectors")
}

/// Third-party suites and fixtures, never committed: `../shared/testvectors/` beside the
/// package, or the folder named by `VOUCH_TESTVECTORS` (then only that folder: an empty or
/// missing one hides the vectors, as on a fresh clone). Every test that reads them carries
/// `.sharedVectors(…)`.
public enum SharedVectors: VectorFolder {
    public static let root: URL = {
        if let path = ProcessInfo.processInfo.environment["VOUCH_TESTVECTORS"], !path.isEmpty {
            return URL(fileURLWithPath: path, isDirectory: true)
        }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared/testvectors")
    }()

    /// Whether `folder` (one of the suites, such as `wycheproof`) is there to read.
    public static func has(_ folder: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url(folder).path, isDirectory: &isDirectory)
            && isDirectory.boolValue
    }

    /// Why the tests of `folders` are skipped, or `nil` when every folder is there: the folders
    /// missing, where they were looked for, and how to provide them.
    public static func missing(_ folders: [String]) -> String? {
        let absent = folders.filter { !has($0) }
        guard !absent.isEmpty else { return nil }
        return "needs the shared test vectors \(absent.map { "\($0)/" }.joined(separator: ", ")), not found in "
            + "\(root.path): put the shared test vectors at ../shared/testvectors/ beside the package, or set "
            + "VOUCH_TESTVECTORS=DIR (CONTRIBUTING.md)"
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test (or every test of the suite) only when the shared suites `folders` are
    /// present; otherwise it is reported as skipped, with the folders it needs and how to
    /// provide them.
    public static func sharedVectors(_ folders: String...) -> Self {
        let reason = SharedVectors.missing(folders)
        return .enabled(
            if: reason == nil,
            Comment(rawValue: reason ?? "needs \(folders.joined(separator: ", ")) in \(SharedVectors.root.path)"))
    }
}

extension VectorFolder {
    public static func url(_ path: String) -> URL { root.appendingPathComponent(path) }

    public static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: url(path)))
    }

    /// The file's text without leading or trailing white space.
    public static func text(_ path: String) throws -> String {
        String(decoding: try bytes(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public static func json(_ path: String) throws -> JSONValue {
        try StrictJSON.parse(try bytes(path), limits: .init(maximumDepth: 64))
    }

    /// The paths (relative to the root) of the files in `folder`, sorted by name, optionally
    /// only those ending in `.pathExtension`.
    public static func files(in folder: String, withExtension pathExtension: String? = nil) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url(folder).path)
            .filter { name in pathExtension.map { name.hasSuffix("." + $0) } ?? true }
            .sorted()
            .map { "\(folder)/\($0)" }
    }

    /// The first certificate of a DER or PEM file, as DER.
    public static func certificateDER(_ path: String) throws -> [UInt8] {
        guard let first = CertificateFile.certificates(in: try bytes(path)).first else {
            throw TestFailure("no certificate in \(path)")
        }
        return first
    }

    /// The real Apple tokens, by path.
    public static func realTokens() throws -> [(name: String, token: String)] {
        try files(in: "apple-real/real").map { ($0, try text($0)) }
    }
}

/// A failed expectation in test set-up, with what was missing.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension SharedVectors {
    /// The three tokens of Xcode's StoreKit testing and the kinds they hold.
    public static let xcodeSamples: [(path: String, kind: PayloadKind)] = [
        ("apple-xcode/neg-xcode-signed-transaction.jws", .transaction),
        ("apple-xcode/neg-xcode-signed-renewal-info.jws", .renewalInfo),
        ("apple-xcode/neg-xcode-signed-app-transaction.jws", .appTransaction),
    ]

    /// The DER of the single `x5c` certificate the Xcode tokens carry ("StoreKit Testing in
    /// Xcode"), taken from the token itself.
    public static func xcodeCertificate() throws -> [UInt8] {
        try DecodedJWS(text(xcodeSamples[0].path)).chain[0]
    }
}
