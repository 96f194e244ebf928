public import Foundation

/// When the certificate chain is validated.
public enum ValidationTime: Sendable, Equatable {
    /// At the payload's own, authenticated, `signedDate` (`receiptCreationDate` for an app
    /// transaction), as Apple's libraries do offline. Data signed while its leaf certificate was
    /// valid keeps verifying after the leaf expires. A payload without that date is validated at
    /// the current time.
    case signedDate
    /// At the current time: data whose leaf certificate has expired is rejected.
    case now
    /// At a fixed instant.
    case fixed(Timestamp)

    /// At a fixed instant given as a `Date`: its whole millisecond, as ``Timestamp/init(_:)``
    /// reads it (a `Date` made from a ``Timestamp`` gives that timestamp back).
    public static func fixed(_ date: Date) -> ValidationTime {
        .fixed(Timestamp(date))
    }
}
