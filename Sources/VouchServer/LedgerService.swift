public import Foundation
internal import Vouch
public import VouchBatch
public import VouchEntitlements
public import VouchStripe

/// The ledger over HTTP: what `vouch serve` answers.
///
/// | request | answer |
/// |---|---|
/// | `POST /v1/apple/notifications` | a notification (`{"signedPayload":…}`) verified and stored |
/// | `POST /v1/stripe/webhook` | a Stripe delivery verified with its `Stripe-Signature` and stored |
/// | `POST /v1/accounts/{account}/purchases` | `{"jws":…}` or `{"receipt":…}` verified, bound to the account, stored; its entitlements |
/// | `GET /v1/accounts/{account}/entitlements[?at=DATE]` | the account's entitlements at `at` (default now) |
/// | `GET /v1/accounts/{account}/revocations` | the account's revocations |
/// | `GET /healthz` | `200` when the store answers, `503` when not |
/// | `GET /metrics` | Prometheus text |
///
/// The account endpoints need `Authorization: Bearer TOKEN` with one of
/// ``Configuration/apiTokens``, compared in constant time; the webhooks need none, their
/// signature is their authentication. Every body is read through the input layer
/// (VouchBatch's `InputReader`) and verified as `vouch batch` verifies a line; every error is
/// `{"error":{"code":…,"reason":…}}` with the library's stable code: `400` for data refused,
/// `409` for `account_conflict`, `500` when the store cannot run (a sender retries), `401`,
/// `404`, `405`, `413` for requests refused before their body is read. A `200` is sent only
/// once what the request carried is committed.
public final class LedgerService: HTTPHandler, @unchecked Sendable {
    /// What the service verifies with and answers by.
    public struct Configuration: Sendable {
        /// Verifies tokens and receipts (its `verifier`, `receiptVerifier`); `kind` and `jobs`
        /// are set per endpoint.
        public var verifier: BatchVerifier
        /// Verifies Stripe deliveries; `nil` refuses them (`404`).
        public var stripeVerifier: StripeWebhookVerifier?
        /// The metadata key of a Stripe subscription's account.
        public var stripeAccountKey = EntitlementLedger.defaultStripeAccountKey
        /// The catalog the answers use (tiers, trials, what a refund ends).
        public var catalog = ProductCatalog()
        /// Whether each account's record carries its tier (a catalog was given).
        public var includeTier = false
        /// The bearer tokens of the account endpoints; none closes them (`401`).
        public var apiTokens: [String] = []
        /// The largest body read.
        public var maximumBody = 1 << 20
        /// How each request is logged on standard error; `nil` logs nothing.
        public var logFormat: LogFormat? = .json
        /// The version `GET /metrics` names.
        public var version = "0"
        /// The clock of `GET …/entitlements` without `at`, and of the log.
        public var now: @Sendable () -> Date = { Date() }

        /// A configuration verifying with `verifier`; the rest by default.
        public init(verifier: BatchVerifier) {
            self.verifier = verifier
        }
    }

    /// How a request's log line is written.
    public enum LogFormat: String, Sendable, CaseIterable {
        /// One JSON object per line: `{"time":…,"method":…,"path":…,"status":…,"code":…,"ms":…}`.
        case json
        /// `TIME METHOD PATH STATUS CODE MS ms`.
        case text
    }

    private let configuration: Configuration
    private let store: any LedgerStoring
    private let committer: Committer
    private let readers: StorePool
    private let metrics: ServerMetrics
    private let tokens: [[UInt8]]
    private let logLock = NSLock()

    /// A service storing into `store` and answering questions from `readers` (connections to
    /// the same store, one per thread that may ask at once; `store` itself when empty).
    public init(_ configuration: Configuration, store: any LedgerStoring, readers: [any LedgerStoring]) {
        self.configuration = configuration
        self.store = store
        let metrics = ServerMetrics(version: configuration.version)
        self.metrics = metrics
        committer = Committer(store: store, stripeAccountKey: configuration.stripeAccountKey) { change, count in
            metrics.committed(count, duplicates: change.duplicateNotifications + change.retriedNotifications)
        }
        self.readers = StorePool(readers.isEmpty ? [store] : readers)
        tokens = configuration.apiTokens.map { Array($0.utf8) }
    }

    /// Stops the thread that commits (once what waits is stored) and closes the store's
    /// connections: call it once the server is stopped.
    public func close() {
        committer.stop()
        readers.close()
        store.close()
    }

    // MARK: Routes

    /// What a path names.
    enum Route: Equatable {
        case notifications
        case stripe
        case purchases(String)
        case entitlements(String)
        case revocations(String)
        case health
        case metrics

        init?(_ path: String) {
            switch path {
            case "/v1/apple/notifications": self = .notifications
            case "/v1/stripe/webhook": self = .stripe
            case "/healthz": self = .health
            case "/metrics": self = .metrics
            default:
                let parts = path.split(separator: "/", omittingEmptySubsequences: false)
                guard parts.count == 5, parts[0].isEmpty, parts[1] == "v1", parts[2] == "accounts", !parts[3].isEmpty
                else { return nil }
                let account = String(parts[3])
                switch parts[4] {
                case "purchases": self = .purchases(account)
                case "entitlements": self = .entitlements(account)
                case "revocations": self = .revocations(account)
                default: return nil
                }
            }
        }

        /// The route as the metrics and the log name it, without the account.
        var endpoint: String {
            switch self {
            case .notifications: "/v1/apple/notifications"
            case .stripe: "/v1/stripe/webhook"
            case .purchases: "/v1/accounts/{account}/purchases"
            case .entitlements: "/v1/accounts/{account}/entitlements"
            case .revocations: "/v1/accounts/{account}/revocations"
            case .health: "/healthz"
            case .metrics: "/metrics"
            }
        }

        var method: String {
            switch self {
            case .notifications, .stripe, .purchases: "POST"
            default: "GET"
            }
        }

        var needsToken: Bool {
            switch self {
            case .purchases, .entitlements, .revocations: true
            default: false
            }
        }
    }

    // MARK: HTTPHandler

    /// Refuses, before the body is read, a path that names nothing (`404`), a wrong method
    /// (`405`), an account request without a valid token (`401`) and a body declared larger
    /// than ``Configuration/maximumBody`` (`413`).
    public func screen(_ request: HTTPRequest, declaredLength: Int?) -> HTTPResponse? {
        guard let route = Route(request.path) else {
            return Self.error(404, "not_found", "no endpoint at \(request.path)")
        }
        guard request.method == route.method else {
            var response = Self.error(
                405, "method_not_allowed", "\(route.endpoint) takes \(route.method), not \(request.method)")
            response.headers.append(.init("Allow", route.method))
            return response
        }
        if route.needsToken, !authorized(request.headers["authorization"]) {
            var response = Self.error(
                401, "unauthorized",
                tokens.isEmpty
                    ? "the account endpoints are closed: the server was started without --api-token-file"
                    : "a valid 'Authorization: Bearer TOKEN' header is needed")
            response.headers.append(.init("WWW-Authenticate", "Bearer"))
            return response
        }
        if route == .stripe, configuration.stripeVerifier == nil {
            return Self.error(
                404, "not_found", "this server takes no Stripe deliveries: it was started without --stripe-secret-file")
        }
        if let declaredLength, declaredLength > configuration.maximumBody {
            return bodyTooLarge(request)
        }
        return nil
    }

    /// `413 body_too_large`.
    public func bodyTooLarge(_ request: HTTPRequest) -> HTTPResponse {
        Self.error(413, "body_too_large", "the body is over the server's limit of \(configuration.maximumBody) bytes")
    }

    /// `408 request_timeout`: the body did not come whole within the server's timeout.
    public func tooSlow(_ request: HTTPRequest) -> HTTPResponse {
        Self.error(408, "request_timeout", "the body was not whole within the server's timeout")
    }

    /// Answers a request whose body is in.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        guard let route = Route(request.path) else { return Self.error(404, "not_found", "no endpoint") }
        switch route {
        case .notifications:
            return store(verify(request.body, field: "signedPayload", kind: .notification), account: nil)
        case .stripe:
            return store(verifyStripe(request), account: nil)
        case .purchases(let account):
            return purchase(request.body, account: account)
        case .entitlements(let account):
            var instant = Timestamp(configuration.now())
            if let text = request.query["at"], text != "now" {
                guard let date = CivilTime.date(text, .option) else {
                    return Self.error(
                        400, "invalid_date",
                        "at=\(text) is not now or a date such as 2026-02-01 or 2026-02-01T12:30:00Z")
                }
                instant = Timestamp(date)
            }
            return answer { reader throws(LedgerError) in
                self.records(try reader.entitlements(ofAccountsMatching: account, at: instant), at: instant)
            }
        case .revocations(let account):
            return answer { reader throws(LedgerError) in
                JSONWriter.encode(.array(try reader.revocations(ofAccountsMatching: account).map(\.json)))
            }
        case .health:
            do {
                try readers.use { reader throws(LedgerError) in _ = try reader.accounts(matching: "healthz") }
                return HTTPResponse(status: 200, body: Array(#"{"status":"ok"}"#.utf8))
            } catch {
                return Self.error(503, error.code.rawValue, error.reason)
            }
        case .metrics:
            return HTTPResponse(
                status: 200, contentType: "text/plain; version=0.0.4",
                body: Array(metrics.text(transactions: committer.transactions).utf8))
        }
    }

    /// Counts the request and writes its log line: method, path, status, code, duration; never
    /// a header or the body.
    public func finished(_ request: HTTPRequest, response: HTTPResponse?, seconds: Double) {
        let route = Route(request.path)
        let status = response?.status ?? 0
        let code = response?.code ?? (response == nil ? "connection_closed" : nil)
        metrics.request(endpoint: route?.endpoint ?? "other", status: status, code: code, seconds: seconds)
        guard let format = configuration.logFormat else { return }
        let time = Timestamp(configuration.now()).iso8601
        let milliseconds = String(format: "%.3f", seconds * 1000)
        // A path that names no route is cut, so that a client cannot fill the log.
        let path = String(request.path.prefix(200))
        let line: [UInt8]
        switch format {
        case .json:
            line =
                JSONWriter.encode(
                    .object(
                        JSONObject([
                            .init("time", .string(time)), .init("method", .string(String(request.method.prefix(16)))),
                            .init("path", .string(path)), .init("status", .number(String(status))),
                            .init("code", code.map(JSONValue.string) ?? .null),
                            .init("ms", .number(milliseconds)),
                        ]))) + [0x0A]
        case .text:
            line = Array(
                "\(time) \(request.method.prefix(16)) \(Self.printable(path)) \(status) \(code ?? "-") \(milliseconds) ms\n"
                    .utf8)
        }
        logLock.lock()
        defer { logLock.unlock() }
        line.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
    }

    // MARK: Endpoints

    /// The one verified input of a body, through the input layer: `field` holds the token,
    /// which must be of `kind` when given.
    private func verify(_ body: [UInt8], field: String, kind: PayloadKind?) -> Result<VerifiedInput, VerificationError>
    {
        var options = InputOptions(field: field)
        options.maximumInputSize = configuration.maximumBody
        var batch = configuration.verifier
        batch.jobs = 1
        batch.kind = kind
        var results: [InputResult] = []
        do {
            let reader = try InputReader(bytes: body, options: options)
            _ = try batch.verify(from: reader, options: .init(skipEmpty: true), deliver: { results.append($0) })
        } catch {
            return .failure(VerificationError(.malformedToken, "the body cannot be read: \(error)"))
        }
        guard let first = results.first else {
            return .failure(VerificationError(.malformedToken, "the body is empty"))
        }
        if case .failure(let error) = first.result { return .failure(error) }
        guard results.count == 1 else {
            return .failure(
                VerificationError(
                    .malformedToken, "the body holds \(results.count) tokens; one JSON object with one is expected"))
        }
        return first.result
    }

    private func verifyStripe(_ request: HTTPRequest) -> Result<VerifiedInput, VerificationError> {
        guard let verifier = configuration.stripeVerifier else {
            return .failure(VerificationError(.malformedToken, "no Stripe verifier"))
        }
        let delivery = StripeDelivery(signature: request.headers["stripe-signature"] ?? "", body: request.body)
        do {
            return .success(.stripeEvent(try verifier.verify(delivery)))
        } catch {
            return .failure(error)
        }
    }

    /// Stores what verified and answers `200 {"status":"stored"}`; or the refusal.
    private func store(_ verified: Result<VerifiedInput, VerificationError>, account: String?) -> HTTPResponse {
        commit(verified, account: account) ?? HTTPResponse(status: 200, body: Array(#"{"status":"stored"}"#.utf8))
    }

    /// Stores what verified; `nil` once it is committed, or the refusal.
    private func commit(_ verified: Result<VerifiedInput, VerificationError>, account: String?) -> HTTPResponse? {
        let input: VerifiedInput
        switch verified {
        case .success(let value): input = value
        case .failure(let error):
            return Self.error(error.webhookStatus, error.code.rawValue, error.reason)
        }
        return committer.add(input, account: account).map { Self.error(Self.status($0), $0.code.rawValue, $0.reason) }
    }

    /// `{"jws":…}` or `{"receipt":…}`, bound to `account`; the account's entitlements now.
    private func purchase(_ body: [UInt8], account: String) -> HTTPResponse {
        let object: JSONObject
        do {
            object = try StrictJSON.parseObject(body)
        } catch {
            return Self.error(400, "malformed_request", "the body is not a JSON object: \(error)")
        }
        let fields = ["jws", "receipt"].filter { object[$0] != nil }
        guard fields.count == 1, case .string = object[fields[0]] else {
            return Self.error(
                400, "malformed_request",
                "the body must be {\"jws\":\"…\"} (a StoreKit 2 jwsRepresentation) or {\"receipt\":\"…\"} (a base64 app receipt)"
            )
        }
        let verified = verify(body, field: fields[0], kind: fields[0] == "jws" ? .transaction : nil)
        if let refusal = commit(verified, account: account) { return refusal }
        let now = Timestamp(configuration.now())
        return answer { reader throws(LedgerError) in
            self.records(try reader.entitlements(ofAccountsMatching: account, at: now), at: now)
        }
    }

    /// A question to the store: `200` with its JSON, or `500` with why the store cannot answer.
    private func answer(_ question: (any LedgerStoring) throws(LedgerError) -> [UInt8]) -> HTTPResponse {
        do {
            return HTTPResponse(status: 200, body: try readers.use(question))
        } catch {
            return Self.error(Self.status(error), error.code.rawValue, error.reason)
        }
    }

    /// The records `vouch entitlements --db … --json --account ID --at DATE` prints, as one
    /// JSON array.
    private func records(_ answers: [AccountEntitlements], at instant: Timestamp) -> [UInt8] {
        JSONWriter.encode(.array(answers.map { $0.json(at: instant, includeTier: configuration.includeTier) }))
    }

    // MARK: Helpers

    /// The library's webhook status of a store's refusal (`400` for data refused, `500` when
    /// the store cannot run), but `409` for an account conflict: a backend tells its user.
    static func status(_ error: LedgerError) -> Int {
        error.code == .accountConflict ? 409 : error.webhookStatus
    }

    /// `{"error":{"code":…,"reason":…}}` with `status`.
    static func error(_ status: Int, _ code: String, _ reason: String) -> HTTPResponse {
        let body = JSONWriter.encode(
            .object(
                JSONObject([
                    .init(
                        "error",
                        .object(JSONObject([.init("code", .string(code)), .init("reason", .string(reason))])))
                ])))
        return HTTPResponse(status: status, body: body, code: code)
    }

    /// Whether `header` is `Bearer TOKEN` with one of the tokens, compared in constant time:
    /// every token is compared whole, whatever matched before.
    private func authorized(_ header: String?) -> Bool {
        guard let header, header.hasPrefix("Bearer ") else { return false }
        let given = Array(header.utf8.dropFirst(7))
        var matched = false
        for token in tokens {
            var difference = UInt8(token.count == given.count ? 0 : 1)
            for index in 0..<token.count {
                difference |= token[index] ^ (index < given.count ? given[index] : 0)
            }
            matched = matched || difference == 0
        }
        return matched
    }

    /// `text` with control characters shown as `?`, for a text log line.
    private static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
    }
}

/// Connections to the store lent to one request at a time.
final class StorePool: @unchecked Sendable {
    private let condition = NSCondition()
    private var idle: [any LedgerStoring]

    init(_ stores: [any LedgerStoring]) {
        idle = stores
    }

    /// Runs `body` with a connection no other request holds meanwhile.
    func use<Value>(_ body: (any LedgerStoring) throws(LedgerError) -> Value) throws(LedgerError) -> Value {
        condition.lock()
        while idle.isEmpty { condition.wait() }
        let store = idle.removeLast()
        condition.unlock()
        defer {
            condition.lock()
            idle.append(store)
            condition.signal()
            condition.unlock()
        }
        return try body(store)
    }

    /// Closes every connection.
    func close() {
        condition.lock()
        defer { condition.unlock() }
        for store in idle { store.close() }
    }
}
