/// The HTTP status a server answers an App Store Server Notifications V2 POST with: one rule,
/// so that no server writes its own.
///
/// The App Store takes `200` to `206` as success; after a `40x` or `50x` it sends the
/// notification again (in Production five times, 1, 12, 24, 48 and 72 hours after the previous
/// attempt; in Sandbox it sends once), as Apple documents in [Responding to App Store Server
/// Notifications](https://developer.apple.com/documentation/appstoreservernotifications/responding-to-app-store-server-notifications).
/// The rule:
///
/// - ``handled`` (200) once the notification verified and what it says was kept: the App Store
///   stops sending it.
/// - ``failed`` (500) when the server could not run: a ``VerificationError`` of category
///   ``VerificationError/Category/internal`` (OpenSSL could not allocate or set up a check), a
///   store that could not be written, any error that is not a verdict on the data. The App Store
///   sends it again, and then it may succeed.
/// - ``refused`` (400) when the data was refused: not a notification body, not signed by Apple's
///   chain, another app's or another environment's data. The App Store sends it again too, on
///   purpose: a genuine notification is refused only when this server's trust configuration is
///   wrong (the bundle id, app Apple ID or environments it accepts, its anchors), and a retry
///   after the fix verifies, where a `200` would have told the App Store the notification was
///   handled and lost it. Data that is not the App Store's costs nothing to refuse again. A
///   `4xx`, not a `5xx`, keeps refused data apart from a server that could not run in logs and
///   in the App Store's record of its attempts.
public enum WebhookStatus {
    /// `200`: the notification verified and was kept.
    public static let handled = 200
    /// `400`: the data was refused (a verdict on the data); the App Store sends it again.
    public static let refused = 400
    /// `500`: the server could not run; the App Store sends it again.
    public static let failed = 500

    /// The status that answers a POST whose handling threw `error`: the error's own
    /// ``WebhookError/webhookStatus`` (a ``VerificationError``'s: ``failed`` for an `internal`
    /// one, ``refused`` for any other), and ``failed`` for an error that does not say.
    public static func answering(_ error: any Error) -> Int {
        (error as? any WebhookError)?.webhookStatus ?? failed
    }
}

/// An error that says how a webhook answers it: the HTTP status of ``WebhookStatus``'s rule.
///
/// ``VerificationError`` conforms; an error of a server's own (a store's) conforms to answer
/// ``WebhookStatus/refused`` for a verdict on the data, which ``WebhookStatus/answering(_:)``
/// otherwise answers ``WebhookStatus/failed``.
public protocol WebhookError: Error {
    /// ``WebhookStatus/refused`` when the error is a verdict on the data,
    /// ``WebhookStatus/failed`` when the server could not run.
    var webhookStatus: Int { get }
}

extension VerificationError: WebhookError {
    /// ``WebhookStatus/failed`` (500) for an error of category ``Category/internal``: no
    /// verdict on the data, so the App Store's retry may succeed; ``WebhookStatus/refused``
    /// (400) for every other, a verdict on the data (see ``WebhookStatus`` for why refused data
    /// is not answered `200`).
    public var webhookStatus: Int {
        category == .internal ? WebhookStatus.failed : WebhookStatus.refused
    }
}
