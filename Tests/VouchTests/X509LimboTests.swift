import Foundation
import Testing
import VouchOpenSSL
import VouchTestSupport

@testable import Vouch

/// The x509-limbo subset (`x509-limbo/` in the shared test vectors) through the chain layer.
///
/// Two verdicts per case, each asserted with its code:
/// - **Vouch**: what a token carrying `x5c = [peer] + intermediates + [trusted root]` gets from
///   the verifier's chain steps: exactly three certificates, Apple's leaf policy (X.509 v3, not
///   a CA, EC P-256 key), then `ChainValidator` (OpenSSL, RFC 5280 strict mode, the path must
///   be leaf, that intermediate, an anchor). Apple's marker extensions and CA key pins are left
///   out: limbo's CAs are P-256 and carry no Apple markers, and those pins have their own tests.
/// - **Generic**: the same leaf policy and OpenSSL path validation through any of the case's
///   intermediates, without the three-certificate shape: what the chain checks alone decide.
///
/// Every case limbo expects to fail fails the Vouch verdict. Where a verdict differs from
/// limbo's expectation, the case is listed below and in the README with the reason.
@Suite(.sharedVectors("x509-limbo"))
struct X509LimboTests {
    struct Case: Sendable {
        let id: String
        let trusted: [Certificate?]
        let intermediates: [Certificate?]
        let peer: Certificate?
        /// Seconds since 1970, rounded down as the verifier rounds a signed date.
        let time: Int64
        let expectsSuccess: Bool
    }

    /// `validation_time` null means "now" upstream; a fixed instant keeps the tests repeatable
    /// (the certificates of those cases are valid from 1970 for a thousand years).
    static let defaultTime: Int64 = 1_748_779_200  // 2025-06-01T12:00:00Z

    /// Empty when the shared test vectors are absent (the suite is skipped then).
    static let cases: [Case] = {
        guard SharedVectors.has("x509-limbo") else { return [] }
        let root = try! SharedVectors.json("x509-limbo/limbo-subset.json")
        return root.objectValue!["testcases"]!.arrayValue!.map { value in
            let object = value.objectValue!
            func certificate(_ value: JSONValue) -> Certificate? {
                Certificate(derOrPEM: Array(value.stringValue!.utf8))
            }
            return Case(
                id: object["id"]!.stringValue!,
                trusted: object["trusted_certs"]!.arrayValue!.map(certificate),
                intermediates: object["untrusted_intermediates"]!.arrayValue!.map(certificate),
                peer: certificate(object["peer_certificate"]!),
                time: object["validation_time"]!.stringValue.map(seconds) ?? defaultTime,
                expectsSuccess: object["expected_result"]!.stringValue! == "SUCCESS")
        }
    }()

    /// RFC 3339 with an optional fraction, rounded down to the second.
    static func seconds(_ text: String) -> Int64 {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let date = formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text)!
        return Int64(date.timeIntervalSince1970.rounded(.down))
    }

    /// The verifier's chain steps on `[peer] + intermediates + [trusted[0]]`; `nil` when accepted.
    /// Header parsing would refuse more than `maximumCertificates` entries, or one that does not
    /// parse; then the verifier's own steps, in its order: `AppleChainPolicy.signingChain`
    /// (shape and leaf), `ChainValidator.validate`, `AppleChainPolicy.checkIntermediate`.
    static func vouchVerdict(_ test: Case) -> VerificationError.Code? {
        let x5c = [test.peer] + test.intermediates + [test.trusted[0]]
        guard x5c.count <= ProtectedHeader.maximumCertificates else { return .wrongChainLength }
        let certificates = x5c.compactMap { $0 }
        guard certificates.count == x5c.count else { return .badCertificateEncoding }
        do throws(VerificationError) {
            let chain = try AppleChainPolicy.signingChain(certificates)
            let validator = ChainValidator(anchors: test.trusted.compactMap { $0 }, strict: true)
            _ = try validator.validate(leaf: chain.leaf, intermediate: chain.intermediate, at: test.time)
            try AppleChainPolicy.checkIntermediate(chain.intermediate)
            return nil
        } catch {
            return error.code
        }
    }

    /// Leaf policy and OpenSSL path validation through any intermediates, no shape rule.
    static func genericVerdict(_ test: Case) -> VerificationError.Code? {
        guard let peer = test.peer, test.intermediates.allSatisfy({ $0 != nil }) else { return .badCertificateEncoding }
        do throws(VerificationError) {
            _ = try AppleChainPolicy.leafKey(of: peer)
            let validator = ChainValidator(anchors: test.trusted.compactMap { $0 }, strict: true)
            try validator.validatePath(leaf: peer, untrusted: test.intermediates.compactMap { $0 }, at: test.time) {
                _ in
            }
            return nil
        } catch {
            return error.code
        }
    }

    typealias Code = VerificationError.Code

    /// Both verdicts of every case: `nil` is accepted.
    static let verdicts: [String: (vouch: Code?, generic: Code?)] = [
        "rfc5280::validity::expired-root": (.certificateExpired, .certificateExpired),
        "rfc5280::validity::expired-intermediate": (.certificateExpired, .certificateExpired),
        "rfc5280::validity::expired-leaf": (.certificateExpired, .certificateExpired),
        "rfc5280::validity::notbefore-exact": (nil, nil),
        "rfc5280::validity::notbefore-fractional": (.certificateNotYetValid, .certificateNotYetValid),
        "rfc5280::validity::notafter-exact": (.certificateExpired, .certificateExpired),
        "rfc5280::validity::notafter-fractional": (.certificateExpired, .certificateExpired),
        "rfc5280::validity::expired-1-second": (.certificateExpired, .certificateExpired),
        "rfc5280::validity::expired-5-seconds": (.certificateExpired, .certificateExpired),
        "rfc5280::validity::not-yet-valid-1-second": (.certificateNotYetValid, .certificateNotYetValid),
        "rfc5280::validity::not-yet-valid-5-seconds": (.certificateNotYetValid, .certificateNotYetValid),
        "rfc5280::chain-untrusted-root": (.wrongChainLength, .untrustedChain),
        "rfc5280::intermediate-ca-without-ca-bit": (.untrustedChain, .untrustedChain),
        "rfc5280::intermediate-ca-missing-basic-constraints": (.wrongChainLength, .untrustedChain),
        "rfc5280::unknown-critical-extension-ee": (.wrongChainLength, .untrustedChain),
        "rfc5280::unknown-critical-extension-intermediate": (.untrustedChain, .untrustedChain),
        "rfc5280::unknown-critical-extension-root": (.wrongChainLength, .untrustedChain),
        "rfc5280::unknown-critical-extension-unrelated-root": (.wrongChainLength, nil),
        "rfc5280::unknown-critical-extension-unrelated-intermediate": (.wrongChainLength, nil),
        "rfc5280::mismatching-signature-algorithm": (.wrongKeyType, .wrongKeyType),
        "rfc5280::duplicate-extensions": (.wrongChainLength, .untrustedChain),
        "rfc5280::ica-ku-keycertsign": (.wrongChainLength, .untrustedChain),
        "rfc5280::leaf-ku-keycertsign": (.wrongChainLength, .untrustedChain),
        "rfc5280::ee-empty-issuer": (.wrongChainLength, .untrustedChain),
        "rfc5280::ca-empty-subject": (.wrongChainLength, .untrustedChain),
        "pathlen::ee-with-intermediate-pathlen-0": (nil, nil),
        "pathlen::intermediate-violates-pathlen-0": (.wrongChainLength, .untrustedChain),
        "pathological::intermediate-cycle-distinct-cas": (.wrongChainLength, .untrustedChain),
        "pathological::intermediate-cycle-same-logical-ca": (.wrongChainLength, .untrustedChain),
        "pathological::pathological-chain-distinct-subject-distinct-key": (.wrongChainLength, .untrustedChain),
        "pathological::pathological-chain-same-subject-distinct-key": (.wrongChainLength, .untrustedChain),
        "pathological::pathological-chain-distinct-subject-same-key": (.wrongChainLength, .untrustedChain),
        "pathological::pathological-chain-same-subject-same-key": (.wrongChainLength, .untrustedChain),
        "webpki::explicit-curve": (.wrongChainLength, .untrustedChain),
        "webpki::forbidden-p192-root": (.wrongChainLength, nil),
        "webpki::forbidden-p192-leaf": (.wrongChainLength, .wrongKeyType),
        "webpki::forbidden-dsa-root": (.wrongChainLength, nil),
        "webpki::forbidden-dsa-leaf": (.wrongChainLength, .wrongKeyType),
        "webpki::forbidden-weak-rsa-key-in-root": (.wrongChainLength, nil),
        "webpki::forbidden-weak-rsa-in-leaf": (.wrongChainLength, .wrongKeyType),
        "webpki::v1-cert": (.wrongChainLength, .unsupportedCertificateVersion),
        "webpki::ee-basicconstraints-ca": (.wrongChainLength, .leafIsCA),
        "webpki::ca-as-leaf": (.wrongChainLength, .leafIsCA),
        "webpki::cryptographydotio-chain-missing-intermediate": (.wrongChainLength, .wrongKeyType),
        "rfc5280::root-missing-basic-constraints": (.wrongChainLength, .untrustedChain),
        "rfc5280::root-non-critical-basic-constraints": (.wrongChainLength, .untrustedChain),
        "rfc5280::root-inconsistent-ca-extensions": (.wrongChainLength, .untrustedChain),
        "rfc5280::aki::critical-aki": (.wrongChainLength, .untrustedChain),
        "rfc5280::aki::leaf-missing-aki": (.wrongChainLength, .untrustedChain),
        "rfc5280::aki::intermediate-missing-aki": (.untrustedChain, .untrustedChain),
        "rfc5280::aki::self-signed-root-missing-aki": (.wrongChainLength, nil),
        "rfc5280::ski::critical-ski": (.wrongChainLength, .untrustedChain),
        "rfc5280::ski::root-missing-ski": (.wrongChainLength, .untrustedChain),
        "rfc5280::ski::intermediate-missing-ski": (.untrustedChain, .untrustedChain),
        "rfc5280::serial::too-long": (.wrongChainLength, nil),
        "rfc5280::serial::zero": (.wrongChainLength, nil),
        "rfc5280::serial::negative": (.wrongChainLength, .leafIsCA),
        "rfc5280::no-keyusage": (.wrongChainLength, nil),
        "rfc5280::no-basicconstraints": (.wrongChainLength, nil),
        "rfc5280::root-and-intermediate-swapped": (.untrustedChain, .untrustedChain),
    ]

    /// Cases limbo expects to verify that Vouch rejects, and why (the README's table).
    static let rejectedSuccessCases: [String: String] = [
        "rfc5280::validity::notafter-exact": "OpenSSL treats notAfter as exclusive: one second early",
        "rfc5280::validity::notafter-fractional": "the same instant, rounded down to the second",
        "rfc5280::unknown-critical-extension-unrelated-root": "no intermediate: x5c would hold two certificates",
        "rfc5280::unknown-critical-extension-unrelated-intermediate": "two intermediates: x5c would hold four",
        "rfc5280::aki::self-signed-root-missing-aki": "no intermediate",
        "rfc5280::no-keyusage": "no intermediate",
        "rfc5280::no-basicconstraints": "no intermediate",
        "rfc5280::root-and-intermediate-swapped": "only partial chains would accept it; they are never allowed",
    ]

    /// Cases limbo expects to fail that the chain checks alone would accept; the
    /// three-certificate shape rejects each of them.
    static let failuresLeftToTheShapeRule: Set<String> = [
        "webpki::forbidden-p192-root", "webpki::forbidden-dsa-root", "webpki::forbidden-weak-rsa-key-in-root",
        "rfc5280::serial::too-long", "rfc5280::serial::zero",
    ]

    @Test func theSubsetHoldsSixtyCasesEachWithRecordedVerdicts() {
        #expect(Self.cases.count == 60)
        #expect(Set(Self.cases.map(\.id)) == Set(Self.verdicts.keys))
    }

    @Test(arguments: cases.map(\.id))
    func eachCaseGetsItsRecordedCodes(id: String) throws {
        let test = try #require(Self.cases.first { $0.id == id })
        let expected = try #require(Self.verdicts[id])
        #expect(Self.vouchVerdict(test) == expected.vouch, "Vouch verdict of \(id)")
        #expect(Self.genericVerdict(test) == expected.generic, "generic verdict of \(id)")
    }

    @Test func everyCaseLimboExpectsToFailIsRejected() {
        for test in Self.cases where !test.expectsSuccess {
            #expect(Self.vouchVerdict(test) != nil, "\(test.id) was accepted")
        }
    }

    @Test func successCasesAreAcceptedOrRejectedForAListedReason() {
        for test in Self.cases where test.expectsSuccess {
            #expect((Self.vouchVerdict(test) == nil) != (Self.rejectedSuccessCases[test.id] != nil), "\(test.id)")
        }
    }

    @Test func theChainChecksAloneRejectEveryFailureCaseButTheListedOnes() {
        let accepted = Self.cases.filter { !$0.expectsSuccess && Self.genericVerdict($0) == nil }.map(\.id)
        #expect(Set(accepted) == Self.failuresLeftToTheShapeRule)
    }
}
