import Foundation
import Testing
import Vouch
import VouchSigning
import VouchTestSupport

/// The Advanced Commerce in-app requests: Apple's field rules, the JSON written, and reading it
/// back strictly.
@Suite struct AdvancedCommerceRequestTests {
    static let info = AdvancedCommerceRequestInfo(
        requestReferenceId: TestKeys.nonce, appAccountToken: UUID(uuidString: "8E4A1B2C-0000-4000-8000-00000000ABCD"))

    static func item(description: String = "Pro, monthly", displayName: String = "Pro", sku: String = "pro.monthly")
        -> AdvancedCommerceSubscriptionCreateItem
    {
        AdvancedCommerceSubscriptionCreateItem(
            sku: sku, description: description, displayName: displayName, price: 9990,
            offer: AdvancedCommerceOffer(period: .p1M, periodCount: 3, price: 4990, reason: .acquisition))
    }

    static func subscription(items: [AdvancedCommerceSubscriptionCreateItem] = [item()])
        -> AdvancedCommerceSubscriptionCreateRequest
    {
        AdvancedCommerceSubscriptionCreateRequest(
            requestInfo: info, currency: "USD",
            descriptors: AdvancedCommerceDescriptors(description: "All the features", displayName: "Pro"),
            items: items, period: .p1M, taxCode: "C003-00-2")
    }

    static func failure(_ request: some AdvancedCommerceInAppRequest) -> SigningError? {
        do {
            _ = try request.jsonObject()
            return nil
        } catch {
            return error
        }
    }

    @Test func aSubscriptionIsWrittenWithApplesNamesAndLowerCaseUUIDs() throws {
        #expect(
            JSONWriter.string(.object(try Self.subscription().jsonObject()))
                == #"{"operation":"CREATE_SUBSCRIPTION","version":"1","requestInfo":{"requestReferenceId":"1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed","appAccountToken":"8e4a1b2c-0000-4000-8000-00000000abcd"},"currency":"USD","descriptors":{"description":"All the features","displayName":"Pro"},"items":[{"SKU":"pro.monthly","description":"Pro, monthly","displayName":"Pro","price":9990,"offer":{"periodCount":3,"price":4990,"period":"P1M","reason":"ACQUISITION"}}],"period":"P1M","taxCode":"C003-00-2"}"#
        )
    }

    @Test(arguments: [
        (String(repeating: "d", count: 46), "Pro", "pro", "items[0].description is longer than 45 characters"),
        ("d", String(repeating: "n", count: 31), "pro", "items[0].displayName is longer than 30 characters"),
        ("d", "n", String(repeating: "s", count: 129), "items[0].SKU is longer than 128 characters"),
    ])
    func anItemOverItsLengthIsRefused(description: String, displayName: String, sku: String, reason: String) {
        let error = Self.failure(
            Self.subscription(items: [Self.item(description: description, displayName: displayName, sku: sku)]))
        #expect(error?.code == .invalidRequest)
        #expect(error?.reason == reason)
    }

    @Test func theLengthLimitsThemselvesAreAllowed() {
        let request = Self.subscription(items: [
            Self.item(
                description: String(repeating: "é", count: 45), displayName: String(repeating: "n", count: 30),
                sku: String(repeating: "s", count: 128))
        ])
        #expect(Self.failure(request) == nil)
    }

    @Test(arguments: [0, 13])
    func anOfferOutsideOneToTwelvePeriodsIsRefused(count: Int32) {
        var item = Self.item()
        item.offer = AdvancedCommerceOffer(period: .p1M, periodCount: count, price: 1, reason: .winBack)
        let error = Self.failure(Self.subscription(items: [item]))
        #expect(error?.reason == "items[0].offer.periodCount is not between 1 and 12")
    }

    @Test func anOfferMissingAMemberIsRefused() {
        var item = Self.item()
        item.offer = AdvancedCommerceOffer(period: .p1M, periodCount: 1, price: 1)
        #expect(Self.failure(Self.subscription(items: [item]))?.reason == "items[0].offer.reason is missing")
    }

    @Test func aSubscriptionWithoutItemsIsRefused() {
        #expect(Self.failure(Self.subscription(items: []))?.reason == "items is empty; at least one item is needed")
    }

    @Test func descriptorsNeedBothMembers() {
        var request = Self.subscription()
        request.descriptors = AdvancedCommerceDescriptors(description: "d")
        #expect(Self.failure(request)?.reason == "descriptors.displayName is missing")
    }

    @Test func aModificationWithEmptyItemListsIsRefused() {
        let request = AdvancedCommerceSubscriptionModifyInAppRequest(
            requestInfo: Self.info, transactionId: "1", retainBillingCycle: true, addItems: [])
        #expect(Self.failure(request)?.reason == "addItems is empty; at least one item is needed")
        let change = AdvancedCommerceSubscriptionModifyInAppRequest(
            requestInfo: Self.info, transactionId: "1", retainBillingCycle: false, changeItems: [])
        #expect(Self.failure(change)?.reason == "changeItems is empty; at least one item is needed")
    }

    @Test func everyRequestTypeReadsBackAsWritten() throws {
        let requests: [any AdvancedCommerceInAppRequest] = [
            AdvancedCommerceOneTimeChargeCreateRequest(
                requestInfo: Self.info, currency: "EUR",
                item: AdvancedCommerceOneTimeChargeItem(sku: "c", description: "d", displayName: "n", price: 1),
                taxCode: "t", storefront: "FRA"),
            Self.subscription(),
            AdvancedCommerceSubscriptionModifyInAppRequest(
                requestInfo: AdvancedCommerceRequestInfo(requestReferenceId: TestKeys.nonce, consistencyToken: "ct"),
                transactionId: "2000000123", retainBillingCycle: true,
                addItems: [
                    AdvancedCommerceSubscriptionModifyAddItem(
                        sku: "a", description: "d", displayName: "n", price: 5, proratedPrice: 2)
                ],
                changeItems: [
                    AdvancedCommerceSubscriptionModifyChangeItem(
                        sku: "b", currentSKU: "a", description: "d", displayName: "n", price: 7, reason: .upgrade,
                        effective: .immediately)
                ],
                removeItems: [AdvancedCommerceSKUItem(sku: "z")], currency: "USD",
                descriptors: AdvancedCommerceSubscriptionModifyDescriptors(
                    effective: .nextBillCycle, displayName: "New"),
                periodChange: AdvancedCommerceSubscriptionModifyPeriodChange(effective: .nextBillCycle, period: .p1Y),
                storefront: "USA", taxCode: "t"),
            AdvancedCommerceSubscriptionReactivateInAppRequest(
                requestInfo: Self.info, transactionId: "2000000123", items: [AdvancedCommerceSKUItem(sku: "a")]),
        ]
        for request in requests {
            let json = try request.jsonObject()
            #expect(try AdvancedCommerceRequests.request(json: json).jsonObject() == json)
        }
    }

    @Test(arguments: [
        (#"{"version":"1"}"#, "operation is missing or not a string"),
        (#"{"operation":"REFUND"}"#, "operation \"REFUND\" is not an in-app request"),
        (#"{"operation":"REACTIVATE_SUBSCRIPTION","version":"2"}"#, "version is \"2\"; \"1\" is supported"),
        (
            #"{"operation":"REACTIVATE_SUBSCRIPTION","requestInfo":{"requestReferenceId":"x"},"transactionId":"1"}"#,
            "requestInfo.requestReferenceId is not a UUID"
        ),
        (
            #"{"operation":"REACTIVATE_SUBSCRIPTION","requestInfo":{"requestReferenceId":"1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed"}}"#,
            "transactionId is missing"
        ),
        (
            #"{"operation":"REACTIVATE_SUBSCRIPTION","requestInfo":{"requestReferenceId":"1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed"},"transactionId":"1","storefrnt":"USA"}"#,
            "storefrnt is not a member of this request"
        ),
        (
            #"{"operation":"REACTIVATE_SUBSCRIPTION","requestInfo":{"requestReferenceId":"1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed"},"transactionId":"1","items":[{"SKU":1}]}"#,
            "items[0].SKU is not a string"
        ),
        (
            #"{"operation":"CREATE_ONE_TIME_CHARGE","requestInfo":{"requestReferenceId":"1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed"},"currency":"USD","taxCode":"t","item":{"SKU":"s","description":"d","displayName":"n","price":1.5}}"#,
            "item.price is not an integer"
        ),
    ])
    func aRequestJSONIsReadStrictly(json: String, reason: String) throws {
        let object = try StrictJSON.parseObject(Array(json.utf8))
        let error = #expect(throws: SigningError.self) { try AdvancedCommerceRequests.request(json: object) }
        #expect(error?.code == .invalidRequest)
        #expect(error?.reason.hasPrefix(reason) == true, "\(error?.reason ?? "")")
    }

    @Test func unknownEnumValuesSurvive() throws {
        var request = Self.subscription()
        request.period = AdvancedCommercePeriod(rawValue: "P2Y")
        #expect(try request.jsonObject()["period"] == "P2Y")
        #expect(!request.period.isKnown)
    }
}
