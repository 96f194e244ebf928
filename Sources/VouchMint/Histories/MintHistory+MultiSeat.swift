public import Vouch

/// The steps of a multiseat subscription (App Store Server API 1.25, Notifications 2.25): a group
/// purchaser buys seats by price tier, adds seats partway through a period, lowers the seats that
/// renew, gets some seats refunded; members given a seat have transactions of their own
/// (`ASSIGNED`), and with invitations the app hosts, the App Store releases seat claims
/// (`UNCLAIM_SEATS`).
///
/// A purchaser's transaction carries its seats: `quantity` (the seats of its tiers), `price`
/// (their average price, in milliunits, rounded to the nearest) and `multiSeatInfo` (its
/// `invitationManagement` and `priceTiers`). Renewal info carries the seats that renew:
/// `renewalQuantity`, `multiSeatInfo.renewalPriceTiers` and their average as `renewalPrice`.
extension MintHistory {
    /// A multiseat purchase of an auto-renewable subscription at `date`: `SUBSCRIBED`
    /// (`INITIAL_BUY`) with a transaction of the seats of `tiers`, all of which renew.
    /// - Parameters:
    ///   - productId: the subscription's product.
    ///   - date: when it is purchased.
    ///   - expires: when its first period ends.
    ///   - tiers: the seats by price (at least one seat).
    ///   - invitations: who hosts the invitations to the seats (`invitationManagement`).
    ///   - currency: the currency of the prices.
    ///   - group: the subscription group (the history's default when `nil`).
    @discardableResult
    public mutating func purchaseSeats(
        _ productId: String, at date: Timestamp, expires: Timestamp, tiers: [MultiSeatPriceTier],
        invitations: InvitationManagement, currency: String = "USD", group: String? = nil
    ) -> Transaction {
        if Self.seatCount(tiers) < 1 { problems.append("purchase of \(productId): no seats") }
        var transaction = newPurchase(
            productId, type: .autoRenewableSubscription, at: date, price: 0, currency: currency, expires: expires,
            group: group, quantity: 0)
        transaction["multiSeatInfo"] = .object(TransactionMultiSeatInfo(invitationManagement: invitations).json)
        Self.setSeats(tiers, of: &transaction, price: nil)
        let minted = Transaction(payload: transaction)
        renewalSeats[minted.originalTransactionId] = tiers
        record(minted, at: date.milliseconds, notify: true, type: .subscribed, subtype: .initialBuy)
        return minted
    }

    /// The purchaser added the seats of `tiers` at `date`, partway through the period of
    /// `current`: the App Store restates `current` with `additionalTransactionReason`
    /// `SEAT_ADDITION` (`current` becomes that statement), and sends `DID_CHANGE_RENEWAL_PREF`
    /// (`INCREASE_QUANTITY`) with a further transaction of the added seats, ending with the
    /// period and carrying the same reason. The added seats renew too.
    @discardableResult
    public mutating func addSeats(
        _ current: inout Transaction, at date: Timestamp, tiers: [MultiSeatPriceTier]
    ) -> Transaction {
        let at = date.milliseconds
        checkSeatChange(current, at, "seat addition")
        if Self.seatCount(tiers) < 1 { problems.append("seat addition to \(current.transactionId): no seats") }
        var restated = current.payload
        restated["additionalTransactionReason"] = .string(AdditionalTransactionReason.seatAddition.rawValue)
        restated["signedDate"] = .number(String(at))
        items.append(.transaction(restated))
        current = Transaction(payload: restated, regularPrice: current.regularPrice)

        var added = restated
        added["transactionId"] = .string(String(newId()))
        added["webOrderLineItemId"] = .string(String(newId()))
        added["purchaseDate"] = .number(String(at))
        added["transactionReason"] = .string(TransactionReason.purchase.rawValue)
        added["offerType"] = nil
        added["offerDiscountType"] = nil
        let invitations = current.payload["multiSeatInfo"]?.objectValue?["invitationManagement"]?.stringValue
        added["multiSeatInfo"] = .object(
            TransactionMultiSeatInfo(invitationManagement: invitations.map(InvitationManagement.init(rawValue:))).json)
        Self.setSeats(tiers, of: &added, price: nil)
        let minted = Transaction(payload: added)
        renewalSeats[current.originalTransactionId, default: []] += tiers
        items.append(
            .notification(
                notification(.didChangeRenewalPref, subtype: .increaseQuantity, at: at, status: .active),
                transaction: added, renewalInfo: renewalPayload(minted, signed: at, autoRenew: true)))
        return minted
    }

    /// The purchaser lowered the seats that renew to those of `tiers` at `date`:
    /// `DID_CHANGE_RENEWAL_PREF` (`DECREASE_QUANTITY`) with `current` restated and renewal info
    /// whose `renewalQuantity` counts them. The period keeps its seats; the next one has these.
    public mutating func reduceRenewalSeats(_ current: Transaction, to tiers: [MultiSeatPriceTier], at date: Timestamp)
    {
        let at = date.milliseconds
        checkSeatChange(current, at, "seat reduction")
        let renewing = renewalSeats[current.originalTransactionId].map(Self.seatCount) ?? 0
        let kept = Self.seatCount(tiers)
        if kept < 1 || kept >= renewing {
            problems.append("seat reduction of \(current.transactionId): \(kept) seats is not fewer than \(renewing)")
        }
        renewalSeats[current.originalTransactionId] = tiers
        items.append(
            .notification(
                notification(.didChangeRenewalPref, subtype: .decreaseQuantity, at: at, status: .active),
                transaction: restated(current, at: at),
                renewalInfo: renewalPayload(current, signed: at, autoRenew: true)))
    }

    /// A seat-based refund of `seats` of `transaction`'s seats at `date`: `REFUND` (`SEATS`), the
    /// transaction restated with `multiSeatInfo.revokedSeatQuantity` (the seats refunded so far)
    /// and no revocation fields: it stays valid for the rest. Returns that statement.
    @discardableResult
    public mutating func refundSeats(_ transaction: Transaction, seats: Int32, at date: Timestamp) -> Transaction {
        let at = date.milliseconds
        checkAfterPurchase(transaction, at, "seat refund")
        var info = transaction.payload["multiSeatInfo"]?.objectValue ?? JSONObject()
        let refunded = (info["revokedSeatQuantity"]?.int64Value ?? 0) + Int64(seats)
        let quantity = transaction.payload["quantity"]?.int64Value ?? 1
        if seats < 1 {
            problems.append("seat refund of \(transaction.transactionId): no seats refunded")
        } else if refunded >= quantity {
            // Refunding every seat is a refund of the transaction (`refund`).
            problems.append(
                "seat refund of \(transaction.transactionId): \(refunded) of its \(quantity) seats refunded")
        }
        info["revokedSeatQuantity"] = .number(String(refunded))
        var revoked = restated(transaction, at: at)
        revoked["multiSeatInfo"] = .object(info)
        let minted = Transaction(payload: revoked, regularPrice: transaction.regularPrice)
        items.append(
            .notification(
                notification(.refund, subtype: .seats, at: at, status: .active), transaction: revoked,
                renewalInfo: renewalPayload(minted, signed: at, autoRenew: true)))
        return minted
    }

    /// What a member's server sees when the member is given a seat of `purchase` (with
    /// invitations Apple hosts, or by an organization): a transaction of their own (new ids,
    /// `ASSIGNED`, this history's `appAccountToken`, one seat, no price tiers and no additional
    /// reason), ending with the purchaser's period. Renew it with ``renew(_:until:price:)``.
    @discardableResult
    public mutating func assignSeat(of purchase: Transaction, at date: Timestamp) -> Transaction {
        let at = date.milliseconds
        checkAfterPurchase(purchase, at, "seat assignment")
        let id = newId()
        var assigned = purchase.payload
        assigned["transactionId"] = .string(String(id))
        assigned["originalTransactionId"] = .string(String(id))
        assigned["webOrderLineItemId"] = .string(String(newId()))
        assigned["inAppOwnershipType"] = .string(InAppOwnershipType.assigned.rawValue)
        assigned["appAccountToken"] = appAccountToken.map { .string($0) }
        assigned["signedDate"] = .number(String(at))
        assigned["purchaseDate"] = .number(String(at))
        assigned["originalPurchaseDate"] = .number(String(at))
        assigned["quantity"] = 1
        assigned["additionalTransactionReason"] = nil
        let invitations = purchase.payload["multiSeatInfo"]?.objectValue?["invitationManagement"]?.stringValue
        assigned["multiSeatInfo"] = .object(
            TransactionMultiSeatInfo(invitationManagement: invitations.map(InvitationManagement.init(rawValue:))).json)
        let minted = Transaction(payload: assigned)
        items.append(.transaction(assigned))
        return minted
    }

    /// The App Store released the seat claims `seatClaimIds` (UUIDs the Claim Seat endpoint
    /// returned) of `transaction`'s subscription at `date`: `UNCLAIM_SEATS` with `unclaimInfo`.
    /// Only a subscription whose app hosts the invitations (`DEVELOPER`) has claims.
    public mutating func unclaimSeats(_ seatClaimIds: [String], of transaction: Transaction, at date: Timestamp) {
        let at = date.milliseconds
        checkAfterPurchase(transaction, at, "seat release")
        let invitations = transaction.payload["multiSeatInfo"]?.objectValue?["invitationManagement"]?.stringValue
        if invitations != InvitationManagement.developer.rawValue {
            problems.append("seat release of \(transaction.transactionId): its app does not host the invitations")
        }
        var payload = notification(.unclaimSeats, subtype: nil, at: at, status: nil)
        payload["unclaimInfo"] = .object(UnclaimInfo(unclaimSeatIds: seatClaimIds).json)
        items.append(.notification(payload, transaction: nil, renewalInfo: nil))
    }

    // MARK: Seats

    /// How many seats `tiers` hold.
    static func seatCount(_ tiers: [MultiSeatPriceTier]) -> Int64 {
        tiers.reduce(0) { $0 + Int64($1.quantity ?? 0) }
    }

    /// The average price of one seat of `tiers`, in milliunits, rounded to the nearest.
    static func averagePrice(_ tiers: [MultiSeatPriceTier]) -> Int64 {
        let seats = seatCount(tiers)
        guard seats > 0 else { return 0 }
        let total = tiers.reduce(0) { $0 + ($1.price ?? 0) * Int64($1.quantity ?? 0) }
        return (total + seats / 2) / seats
    }

    /// Sets the seats of a transaction to those of `tiers`: its `quantity`, its `price` (the
    /// tiers' average unless `price` is given), and `multiSeatInfo.priceTiers`, which then holds
    /// no refunded seats.
    static func setSeats(_ tiers: [MultiSeatPriceTier], of transaction: inout JSONObject, price: Int64?) {
        transaction["quantity"] = .number(String(seatCount(tiers)))
        transaction["price"] = .number(String(price ?? averagePrice(tiers)))
        var info = transaction["multiSeatInfo"]?.objectValue ?? JSONObject()
        info["priceTiers"] = .array(tiers.map { .object($0.json) })
        info["revokedSeatQuantity"] = nil
        transaction["multiSeatInfo"] = .object(info)
    }

    /// A change of seats within `current`'s period: after its purchase and before its expiry.
    private mutating func checkSeatChange(_ current: Transaction, _ date: Int64, _ step: String) {
        checkAfterPurchase(current, date, step)
        if let expires = current.expiresMilliseconds, date >= expires {
            problems.append("\(step) of \(current.transactionId): not before its expiry")
        }
        if renewalSeats[current.originalTransactionId] == nil {
            problems.append("\(step) of \(current.transactionId): not a multiseat subscription")
        }
    }
}
