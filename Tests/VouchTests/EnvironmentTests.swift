import Foundation
import Testing
import VouchMint
import VouchTestSupport

@testable import Vouch

/// One verifier for several environments of one app: each token is checked against the
/// environment it names in its own signed payload, and its result says which.
@Suite struct EnvironmentTests {
    static let bundleId = "com.example.environments"
    static let appAppleId: Int64 = 1_234_567_890

    /// A token of `kind` minted for this app in `environment`.
    static func token(_ kind: MintKind, _ environment: String, seed: UInt64 = 1) throws -> String {
        let generator = MintGenerator(
            seed: seed, date: MintTestSupport.signingDate,
            overrides: [
                try MintOverride(parsing: "environment=\(environment)"),
                try MintOverride(parsing: "bundleId=\(bundleId)"),
                try MintOverride(parsing: "appAppleId=\(appAppleId)"),
            ])
        return try generator.token(kind, index: 0, signer: MintTestSupport.signer)
    }

    static func verifier(_ environments: Set<AppStoreEnvironment>, appAppleId: Int64? = appAppleId) throws
        -> Verifier
    {
        var configuration = Verifier.Configuration(
            bundleId: bundleId, environments: environments, appAppleId: appAppleId)
        configuration.trustAnchors = [try MintTestSupport.authority.anchorCertificate()]
        return try Verifier(configuration: configuration)
    }

    @Test(arguments: MintKind.allCases)
    func oneVerifierAcceptsEachOfItsEnvironmentsAndSaysWhich(kind: MintKind) throws {
        let verifier = try Self.verifier([.production, .sandbox])
        for environment in [AppStoreEnvironment.production, .sandbox] {
            let token = try Self.token(kind, environment.rawValue)
            let verified = try verifier.verify(token)
            #expect(verified.environment == environment, "\(kind) \(environment)")
        }
        let error = verifier.rejection(try Self.token(kind, "LocalTesting"))
        #expect(error?.code == .wrongEnvironment)
        #expect(error?.reason == #"environment is "LocalTesting"; expected "Production" or "Sandbox""#)
    }

    @Test func aSingleEnvironmentStillRefusesTheOtherWithTheSameReason() throws {
        let sandbox = try Self.token(.transaction, "Sandbox")
        let production = try Self.verifier([.production])
        #expect(production.configuration.environment == .production)
        let error = production.rejection(sandbox)
        #expect(error?.code == .wrongEnvironment)
        #expect(error?.reason == #"environment is "Sandbox"; expected "Production""#)
        #expect(try Self.verifier([.sandbox]).verify(sandbox).environment == .sandbox)
    }

    @Test func typedResultsSayTheirEnvironment() throws {
        let verifier = try Self.verifier([.production, .sandbox])
        let notification = try verifier.verify(
            try Self.token(.notification, "Sandbox"), as: ResponseBodyV2DecodedPayload.self)
        #expect(notification.environment == .sandbox)
        #expect(notification.transaction?.environment == .sandbox)
        let appTransaction = try verifier.verify(try Self.token(.appTransaction, "Production"), as: AppTransaction.self)
        #expect(appTransaction.environment == .production)
        #expect(appTransaction.value.receiptType == .production)
    }

    @Test func productionAmongSeveralEnvironmentsStillRequiresTheAppAppleId() throws {
        func error(_ environments: Set<AppStoreEnvironment>) -> ConfigurationError? {
            do {
                _ = try Verifier(configuration: .init(bundleId: Self.bundleId, environments: environments))
                return nil
            } catch {
                return error
            }
        }
        #expect(error([.production, .sandbox])?.code == .missingAppAppleId)
        #expect(error([.sandbox, .xcode]) == nil)
        #expect(error([])?.code == .missingAppIdentity)
    }

    @Test func theAppAppleIdIsCheckedOnProductionDataOnlyAmongSeveralEnvironments() throws {
        let verifier = try Self.verifier([.production, .sandbox], appAppleId: Self.appAppleId + 1)
        let production = verifier.rejection(try Self.token(.appTransaction, "Production"))
        #expect(production?.code == .wrongAppAppleId)
        #expect(verifier.rejection(try Self.token(.appTransaction, "Sandbox")) == nil)
    }

    @Test func environmentIsTheSingleEnvironmentSpellingOfTheSet() throws {
        var configuration = Verifier.Configuration()
        configuration.environment = .sandbox
        #expect(configuration.environments == [.sandbox])
        configuration.environments = [.production, .sandbox]
        #expect(configuration.environment == nil)
        configuration.environment = nil
        #expect(configuration.environments.isEmpty)
        #expect(
            Verifier.Configuration(bundleId: Self.bundleId, environment: .sandbox).environments
                == Verifier.Configuration(bundleId: Self.bundleId, environments: [.sandbox]).environments)
    }

    /// A notification's nested tokens agree with the notification's own environment, even when
    /// the verifier accepts both: a Sandbox notification cannot carry a Production transaction.
    @Test func aNestedTokenMustNameItsNotificationsEnvironment() throws {
        let signer = MintTestSupport.signer
        let verifier = try Self.verifier([.production, .sandbox])
        var notification = try StrictJSON.parseObject(
            Base64.decodeURL(TokenParts.segments(try Self.token(.notification, "Sandbox"))[1].utf8) ?? [])
        var data = try #require(notification["data"]?.objectValue)
        var transaction = try StrictJSON.parseObject(
            Base64.decodeURL(
                TokenParts.segments(try #require(data["signedTransactionInfo"]?.stringValue))[1].utf8) ?? [])
        transaction["environment"] = "Production"
        data["signedTransactionInfo"] = .string(try signer.sign(payload: transaction))
        notification["data"] = .object(data)
        let error = verifier.rejection(try signer.sign(payload: notification))
        #expect(error?.code == .nestedTokenInvalid)
        #expect(error?.nested?.error.code == .wrongEnvironment)
        #expect(error?.nested?.error.reason == #"environment is "Production"; expected "Sandbox""#)
    }

    @Test func aChunkChecksEachTokenAgainstItsOwnEnvironment() throws {
        let verifier = try Self.verifier([.production, .sandbox])
        let tokens = try ["Production", "Sandbox", "Xcode", "Sandbox"].enumerated().map {
            Array(try Self.token(.transaction, $0.element, seed: UInt64($0.offset)).utf8)[...]
        }
        let outcomes = verifier.verifyChunk(tokens).map { result -> String in
            switch result {
            case .success(let verified): verified.environment?.rawValue ?? "none"
            case .failure(let error): error.code.rawValue
            }
        }
        #expect(outcomes == ["Production", "Sandbox", "wrong_environment", "Sandbox"])
    }
}
