internal import COpenSSL
internal import Foundation

@testable internal import Vouch
@testable internal import VouchBatch
@testable internal import VouchOpenSSL

/// The Xcode StoreKit testing tokens of the shared test vectors (none when they are absent).
let xcodeTokens: [String] = [
    "neg-xcode-signed-transaction", "neg-xcode-signed-renewal-info", "neg-xcode-signed-app-transaction",
]
.compactMap { sharedVectorFile("apple-xcode/\($0).jws") }
.map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) }

/// The certificate those tokens carry, their single `x5c` entry.
let xcodeTokenCertificate: [UInt8]? = {
    guard let token = xcodeTokens.first,
        let header = token.split(separator: ".").first.flatMap({ Base64.decodeURL($0.utf8) }),
        let text = try? StrictJSON.parseObject(header)["x5c"]?.arrayValue?.first?.stringValue
    else { return nil }
    return Base64.decodeStandard(text.utf8)
}()

/// Trusts what the test vectors need to verify: Apple's root, the minted root, and both Xcode
/// certificates.
let fuzzVerifier: Verifier = {
    var configuration = Verifier.Configuration.acceptingAnyApp()
    configuration.trustAnchors = [AppleRootCertificates.rootCAG3, vectorFile("minted/ca/root.der")]
    configuration.xcodeCertificates =
        [vectorFile("minted/xcode/xcode.der")] + (xcodeTokenCertificate.map { [$0] } ?? [])
    return try! Verifier(configuration: configuration)
}()

/// The `header.payload` of every token the vectors hold that may verify, nested tokens included.
let signedInputs: Set<[UInt8]> = {
    var tokens: [String] = []
    let folder = ProcessInfo.processInfo.environment["VOUCH_FUZZ_VECTORS"] ?? "TestVectors"
    let real = (try? FileManager.default.contentsOfDirectory(atPath: "\(folder)/apple-real/real")) ?? []
    for name in real { tokens.append(String(decoding: vectorFile("apple-real/real/\(name)"), as: UTF8.self)) }
    for name in [
        "transaction", "renewal-info", "notification", "app-transaction", "realtime-request",
        "transaction-production", "xcode-transaction", "xcode-renewal-info", "xcode-app-transaction",
    ] {
        tokens += String(decoding: vectorFile("minted/\(name).txt"), as: UTF8.self).split(separator: "\n").map(
            String.init)
    }
    tokens += xcodeTokens
    var inputs = Set<[UInt8]>()
    for token in tokens {
        let trimmed = token.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = trimmed.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { continue }
        inputs.insert(Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8))
        // Nested tokens of notifications verify on their own too.
        guard let payload = Base64.decodeURL(parts[1].utf8), let object = try? StrictJSON.parseObject(payload) else {
            continue
        }
        for (parent, member) in [
            ("data", "signedTransactionInfo"), ("data", "signedRenewalInfo"), ("appData", "signedAppTransactionInfo"),
        ] {
            guard let nested = object[parent]?.objectValue?[member]?.stringValue else { continue }
            let nestedParts = nested.split(separator: ".", omittingEmptySubsequences: false)
            if nestedParts.count == 3 {
                inputs.insert(Array(nestedParts[0].utf8) + [UInt8(ascii: ".")] + Array(nestedParts[1].utf8))
            }
        }
    }
    return inputs
}()

/// Checks one result: a rejection carries a documented code; an acceptance is of bytes some
/// vector signed (anything else would be a forgery); the record the CLI prints parses.
func checkResult(_ result: Result<VerifiedPayload, VerificationError>, token: [UInt8]?) {
    switch result {
    case .success(let verified):
        if let token {
            let signingInput = Array(token[..<(token.lastIndex(of: UInt8(ascii: ".")) ?? 0)])
            require(signedInputs.contains(signingInput), "accepted a token no vector signed")
        }
        require(PayloadKind.detect(in: verified.payload).map { $0 == verified.kind } ?? true, "kind")
    case .failure(let error):
        require(VerificationError.Code.all.contains(error.code), "undocumented code \(error.code)")
        if let nested = error.nested {
            require(
                VerificationError.Code.all.contains(nested.error.code), "undocumented nested code \(nested.error.code)")
        }
    }
    let record = VerificationRecord.json(for: result)
    do {
        _ = try StrictJSON.parseObject(record, limits: .init(maximumDepth: 256))
    } catch {
        fatalError("property broken: the JSON record does not parse: \(error)")
    }
}

/// The whole `vouch verify` path on arbitrary bytes: finding the token (bare or in a JSON body),
/// verifying it, writing the record; and `vouch inspect` on the same bytes.
func fuzzVerify(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    var token: [UInt8]? = nil
    let result = Result { () throws(VerificationError) -> VerifiedPayload in
        let found = try SignedInput.token(in: bytes)
        token = found
        return try fuzzVerifier.verify(bytes: found)
    }
    checkResult(result, token: token)
    _ = try? Inspection(token: String(decoding: bytes, as: UTF8.self))
}

/// Signs payloads with the minted leaf key (TestVectors/minted/ca), so that arbitrary bytes
/// reach everything past the signature check.
final class PayloadSigner: @unchecked Sendable {
    let key: OpaquePointer
    let headerPrefix: [UInt8]

    init() {
        let pem = vectorFile("minted/ca/leaf.key.pem")
        // The memory BIO borrows `pem`; the key read from it is ours for the process.
        key = pem.withUnsafeBytes { buffer in
            let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count))!
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)!
        }
        let chain = ["leaf", "intermediate", "root"].map {
            JSONValue.string(String(decoding: Base64.encodeStandard(vectorFile("minted/ca/\($0).der")), as: UTF8.self))
        }
        let header = JSONObject([.init("alg", "ES256"), .init("x5c", .array(chain))])
        headerPrefix = Base64.encodeURL(JSONWriter.encode(.object(header))) + [UInt8(ascii: ".")]
    }

    func sign(_ payload: [UInt8]) -> [UInt8] {
        var token = headerPrefix + Base64.encodeURL(payload)
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        var der = [UInt8](repeating: 0, count: 80)
        var length = der.count
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1,
            EVP_DigestSign(context, &der, &length, token, token.count) == 1
        else { fatalError("signing failed") }
        let signature: OpaquePointer = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, length)!
        }
        defer { ECDSA_SIG_free(signature) }
        var r: OpaquePointer? = nil
        var s: OpaquePointer? = nil
        // get0: r and s stay owned by `signature`.
        ECDSA_SIG_get0(signature, &r, &s)
        var raw = [UInt8](repeating: 0, count: 64)
        raw.withUnsafeMutableBufferPointer { buffer in
            _ = BN_bn2binpad(r, buffer.baseAddress, 32)
            _ = BN_bn2binpad(s, buffer.baseAddress! + 32, 32)
        }
        token += [UInt8(ascii: ".")] + Base64.encodeURL(raw)
        return token
    }
}

let payloadSigner = PayloadSigner()

/// Arbitrary bytes as a payload signed by a trusted key: the payload JSON, kind detection, the
/// typed models, the claim checks, the validation time and nested tokens all see hostile input.
func fuzzSignedPayload(_ input: UnsafeRawBufferPointer) {
    let token = payloadSigner.sign(Array(input))
    let result = Result { () throws(VerificationError) in try fuzzVerifier.verify(bytes: token) }
    checkResult(result, token: nil)
    if case .success(let verified) = result {
        let parsed = try? StrictJSON.parseObject(Array(input), limits: .init(maximumDepth: 32))
        require(parsed == verified.payload, "the verified payload is not the signed one")
    }
}
