import Foundation
import Vouch
import VouchSigning

/// `vouch sign KIND`: what a server signs with its App Store Connect key for StoreKit and the
/// App Store Server API.
enum SignCommands {
    static let group = CommandGroup(
        path: ["sign"], summary: "Sign offers and requests with an App Store Connect key",
        usage: "vouch sign KIND --key FILE.p8 --key-id ID --bundle-id ID [options]",
        discussion: """
            Signs what StoreKit and the App Store Server API take from a server, with the
            In-App Purchase key (a .p8 file) of App Store Connect: promotional offer
            signatures (version 1 and JWS), introductory offer eligibility, Advanced Commerce
            in-app requests, and the App Store Server API's bearer token. The key is read from
            the file (or standard input for '-') and never printed.
            """,
        noun: "kind",
        footer: "Run 'vouch sign KIND --help' for the options of each kind.",
        examples: [
            "vouch sign api-token --key SubscriptionKey_ABC123DEFG.p8 --key-id ABC123DEFG --bundle-id com.example.app"
                + " --issuer-id 57246542-96fe-1a63-e053-0824d011072a",
            "vouch sign promotional-offer --key SubscriptionKey_ABC123DEFG.p8 --key-id ABC123DEFG"
                + " --bundle-id com.example.app --product-id com.example.pro.monthly --offer-id WINBACK10",
        ])

    static let all: [any Command] = SignKind.allCases.map(SignCommand.init)

    /// The longest key file read: a P-256 key is about 250 bytes of PEM.
    static let keyLimit = 64 * 1024
    /// The longest Advanced Commerce request read.
    static let requestLimit = 1024 * 1024

    /// The bytes of a key file (`-`: standard input), up to ``keyLimit``; one that cannot be
    /// read is `key_unreadable` (exit 66).
    static func readKeyFile(_ path: String, option: String, console: Console) throws -> (bytes: [UInt8], complete: Bool)
    {
        do {
            return try console.readInput(path, limit: keyLimit)
        } catch {
            throw InputError("\(option) \(path): \(SigningError.Code.keyUnreadable): \(error.message)")
        }
    }
}

/// The five kinds of `vouch sign`.
enum SignKind: String, CaseIterable, Sendable {
    case promotionalOffer = "promotional-offer"
    case promotionalOfferV2 = "promotional-offer-v2"
    case introductoryOfferEligibility = "introductory-offer-eligibility"
    case advancedCommerce = "advanced-commerce"
    case apiToken = "api-token"

    var isJWSRequest: Bool { self != .promotionalOffer && self != .apiToken }
}

/// `vouch sign KIND`.
struct SignCommand: Command {
    let kind: SignKind

    var path: [String] { ["sign", kind.rawValue] }

    var summary: String {
        switch kind {
        case .promotionalOffer: "Sign a promotional offer (version 1: ECDSA over the offer's fields)"
        case .promotionalOfferV2: "Sign a promotional offer as a JWS (StoreKit 2, iOS 18.4 on)"
        case .introductoryOfferEligibility: "Sign whether a customer may have an introductory offer"
        case .advancedCommerce: "Sign an Advanced Commerce API in-app request"
        case .apiToken: "Make an App Store Server API bearer token"
        }
    }

    var usage: String {
        let common = "--key FILE.p8 --key-id ID --bundle-id ID"
        switch kind {
        case .promotionalOffer:
            return "vouch sign promotional-offer \(common) --product-id ID --offer-id ID [options]"
        case .promotionalOfferV2:
            return "vouch sign promotional-offer-v2 \(common) --issuer-id ID --product-id ID --offer-id ID [options]"
        case .introductoryOfferEligibility:
            return "vouch sign introductory-offer-eligibility \(common) --issuer-id ID --product-id ID\n"
                + "       --allow-introductory-offer true|false --transaction-id ID [options]"
        case .advancedCommerce:
            return "vouch sign advanced-commerce \(common) --issuer-id ID --request FILE [options]"
        case .apiToken:
            return "vouch sign api-token \(common) --issuer-id ID [--expires-in SECONDS] [options]"
        }
    }

    var discussion: String {
        let jws = """
            Prints a compact JWS (ES256; header alg, kid, typ JWT) whose claims are iss, iat,
            bid, aud, nonce and
            """
        let what: String
        switch kind {
        case .promotionalOffer:
            what = """
                Prints the base64 DER ECDSA signature (P-256, SHA-256) over bundle id, key id,
                product id, offer id, app account token and nonce (both lower case) and
                timestamp, joined by U+2063, as Apple's "Generating a signature for promotional
                offers" describes. StoreKit takes it with the key id, nonce and timestamp:
                --json prints them all.
                """
        case .promotionalOfferV2:
            what = """
                \(jws) productId, offerIdentifier and, when given, transactionId;
                aud is promotional-offer. --json prints it with its header and claims.
                """
        case .introductoryOfferEligibility:
            what = """
                \(jws) productId, allowIntroductoryOffer and transactionId; aud is
                introductory-offer-eligibility. --json prints it with its header and claims.
                """
        case .advancedCommerce:
            what = """
                \(jws) request, the base64 of the request's JSON; aud is
                advanced-commerce-api. --request is the JSON of a one-time charge, or of a
                subscription to create, modify or reactivate, read strictly and checked against
                Apple's field rules. --json prints the JWS with its header and claims.
                """
        case .apiToken:
            what = """
                Prints a JWT for 'Authorization: Bearer' (ES256; header alg, kid, typ JWT;
                claims iss, iat, exp, aud appstoreconnect-v1, bid), as Apple's "Generating JSON
                Web Tokens for API requests" describes. Apple wants a new one per request.
                """
        }
        return what + """


            The key is the .p8 file of App Store Connect (In-App Purchase key), or '-' to read
            it from standard input; it is never printed. Use a test key ('vouch mint iap-key')
            anywhere but in production. 'vouch verify --signing-key' checks the output.
            """
    }

    let exitStatus = """
        0 signed, 64 usage error, 65 invalid key or request, 66 unreadable key or request,
        74 output write error.
        """

    var examples: [String] {
        let key = "--key SubscriptionKey_ABC123DEFG.p8 --key-id ABC123DEFG --bundle-id com.example.app"
        let issuer = "--issuer-id 57246542-96fe-1a63-e053-0824d011072a"
        switch kind {
        case .promotionalOffer:
            return [
                "vouch sign promotional-offer \(key) --product-id com.example.pro.monthly --offer-id WINBACK10",
                "vouch sign promotional-offer \(key) --product-id com.example.pro.monthly --offer-id WINBACK10 --json",
            ]
        case .promotionalOfferV2:
            return [
                "vouch sign promotional-offer-v2 \(key) \(issuer) --product-id com.example.pro.monthly --offer-id WINBACK10",
                "vouch sign promotional-offer-v2 \(key) \(issuer) --product-id com.example.pro.monthly --offer-id WINBACK10"
                    + " --transaction-id 2000000000000001 --json",
            ]
        case .introductoryOfferEligibility:
            return [
                "vouch sign introductory-offer-eligibility \(key) \(issuer) --product-id com.example.pro.monthly"
                    + " --allow-introductory-offer false --transaction-id 2000000000000001",
                "vouch sign introductory-offer-eligibility \(key) \(issuer) --product-id com.example.pro.monthly"
                    + " --allow-introductory-offer true --transaction-id 2000000000000001 --json",
            ]
        case .advancedCommerce:
            return [
                "vouch sign advanced-commerce \(key) \(issuer) --request request.json",
                "vouch sign advanced-commerce \(key) \(issuer) --request - --json < request.json",
            ]
        case .apiToken:
            return [
                "vouch sign api-token \(key) \(issuer)",
                "vouch sign api-token \(key) \(issuer) --expires-in 1200 --json",
            ]
        }
    }

    var options: [CommandOption] {
        var options: [CommandOption] = [
            .value("--key", "FILE", help: "The private key: a .p8 file, or - for standard input"),
            .value("--key-id", "ID", help: "The key's identifier in App Store Connect"),
        ]
        if kind != .promotionalOffer {
            options.append(
                .value("--issuer-id", "ID", help: "Your issuer id (App Store Connect, Users and Access, Keys)"))
        }
        options.append(.value("--bundle-id", "ID", help: "The app's bundle identifier"))
        switch kind {
        case .promotionalOffer:
            options += [
                .value("--product-id", "ID", help: "The subscription's product identifier"),
                .value("--offer-id", "ID", help: "The promotional offer's identifier"),
                .value(
                    "--app-account-token", "TOKEN",
                    help: "The app account token (a UUID) or application username\nthe purchase carries (default: none)"
                ),
            ]
        case .promotionalOfferV2:
            options += [
                .value("--product-id", "ID", help: "The product identifier"),
                .value("--offer-id", "ID", help: "The promotional offer's identifier (offerIdentifier)"),
                .value("--transaction-id", "ID", help: "Any transaction id of the customer (optional)"),
            ]
        case .introductoryOfferEligibility:
            options += [
                .value("--product-id", "ID", help: "The product identifier"),
                .value("--allow-introductory-offer", "true|false", help: "Whether the customer is eligible"),
                .value("--transaction-id", "ID", help: "Any transaction id of the customer"),
            ]
        case .advancedCommerce:
            options.append(.value("--request", "FILE", help: "The request as JSON, or - for standard input"))
        case .apiToken:
            options.append(
                .value(
                    "--expires-in", "SECONDS",
                    help: "exp after iat, 1 to 3600 (default \(AppStoreServerAPITokenCreator.defaultLifetime))"))
        }
        if kind != .apiToken {
            options.append(.value("--nonce", "UUID", help: "The one-time nonce (default: a new UUID)"))
        }
        options += [
            .value(
                "--timestamp", "MS",
                help: kind == .promotionalOffer
                    ? "When the signature is made, in milliseconds since 1970\n(default: now)"
                    : "When the token is made, in milliseconds since 1970; iat\nis its whole seconds (default: now)"),
            .flag("--json", help: "Print a JSON object with everything signed"),
        ]
        return options
    }

    func run(_ arguments: ParsedArguments, console: Console) throws -> Int32 {
        func required(_ name: String) throws(UsageError) -> String {
            guard let value = arguments.value(name) else { throw UsageError("sign \(kind.rawValue) needs \(name)") }
            return value
        }
        let keyPath = try required("--key")
        let keyId = try required("--key-id")
        let bundleId = try required("--bundle-id")
        let issuerId = kind == .promotionalOffer ? "" : try required("--issuer-id")
        let nonce = try (kind == .apiToken ? nil : arguments.value("--nonce")).map { text throws(UsageError) in
            guard let uuid = UUID(uuidString: text) else {
                throw UsageError("--nonce must be a UUID such as 1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed; got '\(text)'")
            }
            return uuid
        }
        let timestamp = try arguments.value("--timestamp").map { text throws(UsageError) in
            guard let milliseconds = Int64(text), milliseconds >= 0 else {
                throw UsageError("--timestamp must be milliseconds since 1970, such as 1700000000000; got '\(text)'")
            }
            return Timestamp(milliseconds: milliseconds)
        }
        if keyPath == "-" && kind == .advancedCommerce && arguments.value("--request") == "-" {
            throw UsageError("--key and --request cannot both read standard input")
        }
        let key = try readKey(keyPath, console: console)
        let now = timestamp ?? Timestamp(console.now())
        let output: [UInt8]
        do {
            switch kind {
            case .promotionalOffer:
                let signature = try PromotionalOfferSignatureCreator(signingKey: key, keyId: keyId, bundleId: bundleId)
                    .createSignature(
                        productId: try required("--product-id"), offerId: try required("--offer-id"),
                        appAccountToken: arguments.value("--app-account-token") ?? "", nonce: nonce ?? UUID(),
                        timestamp: now)
                output =
                    arguments.flag("--json")
                    ? JSONWriter.encode(.object(signature.jsonObject)) : Array(signature.signature.utf8)
            case .promotionalOfferV2:
                output = try Self.write(
                    PromotionalOfferV2SignatureCreator(
                        signingKey: key, keyId: keyId, issuerId: issuerId, bundleId: bundleId
                    ).createSignature(
                        productId: try required("--product-id"), offerIdentifier: try required("--offer-id"),
                        transactionId: arguments.value("--transaction-id"), nonce: nonce ?? UUID(), issuedAt: now),
                    json: arguments.flag("--json"))
            case .introductoryOfferEligibility:
                let allow = try Spelling.choice(
                    try required("--allow-introductory-offer"), option: "--allow-introductory-offer",
                    among: [true, false], name: { "\($0)" })
                output = try Self.write(
                    IntroductoryOfferEligibilitySignatureCreator(
                        signingKey: key, keyId: keyId, issuerId: issuerId, bundleId: bundleId
                    ).createSignature(
                        productId: try required("--product-id"), allowIntroductoryOffer: allow,
                        transactionId: try required("--transaction-id"), nonce: nonce ?? UUID(), issuedAt: now),
                    json: arguments.flag("--json"))
            case .advancedCommerce:
                let request = try readRequest(try required("--request"), console: console)
                output = try Self.write(
                    AdvancedCommerceAPIInAppSignatureCreator(
                        signingKey: key, keyId: keyId, issuerId: issuerId, bundleId: bundleId
                    ).createSignature(request: request, nonce: nonce ?? UUID(), issuedAt: now),
                    json: arguments.flag("--json"))
            case .apiToken:
                var lifetime = AppStoreServerAPITokenCreator.defaultLifetime
                if let text = arguments.value("--expires-in") {
                    guard let seconds = Int(text), (1...AppStoreServerAPITokenCreator.maximumLifetime).contains(seconds)
                    else {
                        throw UsageError(
                            "--expires-in must be 1 to \(AppStoreServerAPITokenCreator.maximumLifetime) seconds (Apple refuses tokens that live longer than an hour); got '\(text)'"
                        )
                    }
                    lifetime = seconds
                }
                output = try Self.write(
                    AppStoreServerAPITokenCreator(signingKey: key, keyId: keyId, issuerId: issuerId, bundleId: bundleId)
                        .createToken(issuedAt: now, expiresIn: lifetime),
                    json: arguments.flag("--json"))
            }
        } catch let error as SigningError {
            switch error.code {
            case .invalidParameter: throw UsageError("\(error.code): \(error.reason)")
            case .invalidRequest: throw InvalidInputError("--request: \(error.code): \(error.reason)")
            default: throw error
            }
        }
        try console.output.write(output + [0x0A])
        return ExitCode.success
    }

    /// A signed JWS as printed: the token alone, or `{"jws":…,"header":…,"claims":…}`.
    static func write(_ signed: SignedJWS, json: Bool) -> [UInt8] {
        guard json else { return Array(signed.token.utf8) }
        return JSONWriter.encode(
            .object(
                JSONObject([
                    .init("jws", .string(signed.token)), .init("header", .object(signed.header)),
                    .init("claims", .object(signed.claims)),
                ])))
    }

    /// The key of `--key`: a file, or standard input for `-`. Its bytes go to OpenSSL only;
    /// no message quotes them.
    func readKey(_ path: String, console: Console) throws -> SigningKey {
        let name = path == "-" ? "standard input" : path
        let (bytes, complete) = try SignCommands.readKeyFile(path, option: "--key", console: console)
        guard complete else {
            throw InvalidInputError("--key \(name) is larger than \(SignCommands.keyLimit) bytes: not a key file")
        }
        do {
            return try SigningKey(pem: bytes)
        } catch {
            guard error.code != .openSSLFailure else { throw error }
            throw InvalidInputError("--key \(name): \(error.code): \(error.reason)")
        }
    }

    /// The Advanced Commerce request of `--request`: a file, or standard input for `-`.
    func readRequest(_ path: String, console: Console) throws -> any AdvancedCommerceInAppRequest {
        let name = path == "-" ? "standard input" : path
        let (bytes, complete) = try console.readInput(path, limit: SignCommands.requestLimit)
        guard complete else {
            throw InvalidInputError("--request \(name) is larger than \(SignCommands.requestLimit) bytes")
        }
        let json: JSONObject
        do {
            json = try StrictJSON.parseObject(bytes, limits: .init(maximumDepth: 16))
        } catch {
            throw InvalidInputError("--request \(name) is not a JSON object: \(error)")
        }
        do {
            return try AdvancedCommerceRequests.request(json: json)
        } catch {
            throw InvalidInputError("--request \(name): \(error.code): \(error.reason)")
        }
    }
}
