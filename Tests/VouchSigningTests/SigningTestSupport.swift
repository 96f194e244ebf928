import Foundation
import Vouch
import VouchMint
import VouchSigning
import VouchTestSupport

/// Keys minted once per test run, as App Store Connect issues them.
enum TestKeys {
    static let minted = try! MintInAppPurchaseKey.generate(keyId: "2X9R4HXF34")
    static let pem = try! minted.privateKeyPEM()
    static let key = try! SigningKey(pem: pem)
    static let publicKey = key.publicKey
    /// Another key, whose signatures the first must refuse.
    static let other = try! SigningKey(pem: try! MintInAppPurchaseKey.generate().privateKeyPEM())

    static let nonce = UUID(uuidString: "1B9D6BCD-BBFD-4B2D-9B5D-AB8DFBBD4BED")!
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    static let bundleId = "com.example.app"
    /// 2023-11-14T22:13:20Z.
    static let issuedAt = Timestamp(milliseconds: 1_700_000_000_123)
}

extension SignedJWS {
    /// The token's three segments decoded, as a verifier would read them.
    var decoded: DecodedJWS { try! DecodedJWS(token) }
}
