import Foundation
import Testing
import VouchOpenSSL
import VouchTestSupport

@testable import Vouch
@testable import VouchMint
@testable import VouchMintPKI
@testable import VouchReceipts

/// Any change to a real receipt's bytes (content, signature, certificate set, container) makes
/// it fail; the same receipt unchanged verifies.
@Suite struct ReceiptMutationTests {
    /// A receipt and the bit flipped in each of its bytes in turn.
    static let receipts: [(String, UInt8)] = [
        ("real/production-2023-02-22-com.ideasoncanvas.MindNodeMac.der", 0x01),  // SHA-1 DER
        ("real/production-2025-04-18-com.dashedspace.analytics.der", 0x80),  // SHA-256, G5
        ("real/sandbox-2016-07-23-com.zhihu.test.der", 0x20),  // SHA-1, the constructed bit of tags
    ]

    @Test(.sharedVectors("receipts"), arguments: receipts)
    func flippingOneBitInAnyByteOfARealReceiptMakesItFail(name: String, mask: UInt8) throws {
        let original = try SharedReceipts.bytes(name)
        let verifier = try ReceiptVerifier(configuration: .acceptingAnyApp())
        #expect(verifier.rejection(original) == nil)
        var accepted: [Int] = []
        var codes: [String: Int] = [:]
        for index in original.indices {
            var mutated = original
            mutated[index] ^= mask
            if let error = verifier.rejection(mutated) {
                codes[error.code.rawValue, default: 0] += 1
            } else {
                accepted.append(index)
            }
        }
        #expect(accepted.isEmpty, "accepted after flipping bytes at \(accepted)")
        // The failures are specific, not one catch-all.
        #expect(codes["bad_signature", default: 0] > 0)
        #expect(codes["receipt_malformed_container", default: 0] > 0)
        #expect(codes.keys.count >= 4, "\(codes)")
    }

    @Test(.sharedVectors("receipts")) func removingOrReorderingCertificatesFollowsTheTrustStoreNotTheReceipt() throws {
        let verifier = try ReceiptVerifier(configuration: .acceptingAnyApp())
        for (name, expected) in [
            ("mut-mindnodemac-2023-root-removed.der", nil), ("mut-mindnodemac-2023-certificates-reversed.der", nil),
            ("mut-mindnodemac-2023-intermediate-removed.der", VerificationError.Code.untrustedChain),
        ] as [(String, VerificationError.Code?)] {
            #expect(verifier.rejection(try SharedReceipts.bytes("negative/\(name)"))?.code == expected, "\(name)")
        }
    }
}
