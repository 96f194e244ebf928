internal import Foundation

@testable internal import Vouch
@testable internal import VouchBatch
@testable internal import VouchOpenSSL

// libFuzzer entry points. One binary holds every target; VOUCH_FUZZ_TARGET picks the one a
// run exercises (scripts/fuzz sets it). Each target takes one input and must return: a crash,
// a hang, a leak or a broken property (`require`) is a finding.

/// The targets, by the name `scripts/fuzz` knows them by.
let fuzzTargets: [String: @Sendable (UnsafeRawBufferPointer) -> Void] = [
    "base64url": fuzzBase64URL,
    "jws": fuzzCompactJWS,
    "header": fuzzHeader,
    "json": fuzzStrictJSON,
    "verify": fuzzVerify,
    "payload": fuzzSignedPayload,
    "input": fuzzInputReader,
    "ecdsa": fuzzFixedKeyES256,
    "receipt": fuzzReceipt,
    "receipt-payload": fuzzReceiptPayload,
]

nonisolated(unsafe) var selectedTarget: (@Sendable (UnsafeRawBufferPointer) -> Void)? = nil

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    let name = ProcessInfo.processInfo.environment["VOUCH_FUZZ_TARGET"] ?? ""
    guard let target = fuzzTargets[name] else {
        let known = fuzzTargets.keys.sorted().joined(separator: ", ")
        FileHandle.standardError.write(Data("set VOUCH_FUZZ_TARGET to one of: \(known)\n".utf8))
        exit(2)
    }
    selectedTarget = target
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    selectedTarget!(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// Stops the run with a finding when a property does not hold.
func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("property broken: \(message())") }
}

/// The test vectors folder (VOUCH_FUZZ_VECTORS, set by scripts/fuzz).
func vectorFile(_ path: String) -> [UInt8] {
    let folder = ProcessInfo.processInfo.environment["VOUCH_FUZZ_VECTORS"] ?? "TestVectors"
    guard let data = FileManager.default.contents(atPath: "\(folder)/\(path)") else {
        fatalError("cannot read \(folder)/\(path); set VOUCH_FUZZ_VECTORS")
    }
    return [UInt8](data)
}

/// A file of the shared third-party test vectors (VOUCH_TESTVECTORS, set by scripts/fuzz), or
/// `nil` when that folder is absent.
func sharedVectorFile(_ path: String) -> [UInt8]? {
    guard let folder = ProcessInfo.processInfo.environment["VOUCH_TESTVECTORS"],
        let data = FileManager.default.contents(atPath: "\(folder)/\(path)")
    else { return nil }
    return [UInt8](data)
}
