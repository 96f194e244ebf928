"""What Apple's App Store Server Library for Python (and PyJWT) make of the inputs the Swift
tests give it, for AppleLibraryComparisonTests. Reads one JSON object on stdin, writes one on
stdout:

  promotional-offer  {key, keyId, bundleId, productId, offerId, appAccountToken, nonce,
                      timestamp, vouchSignature}
      -> {signedText (base64 of the exact bytes Apple's creator signed), signature (Apple's),
          vouchSignatureVerifies (Vouch's signature over Apple's bytes, with cryptography)}
  jws                {kind, key, keyId, issuerId, bundleId, nonce, issuedAt, fields..., vouchToken}
      -> {token (Apple's, its clock and nonce fixed to the given ones), appleVerifies,
          vouchVerifies (each checked with PyJWT under the public key)}
  api-token          {key, keyId, issuerId, bundleId, now, vouchToken}
      -> {token, appleVerifies, vouchVerifies}
  transaction-receipts  {receipts: [base64...]}
      -> {results: [{id} | {none: true} | {exception: NAME}]}
  app-receipts       {receipts: [base64...]}
      -> {results: [{id} | {none: true} | {exception: NAME}]}
"""

import base64
import datetime
import json
import sys
import types
import uuid

import jwt
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

import appstoreserverlibrary.api_client as api_client
import appstoreserverlibrary.jws_signature_creator as jws_creator
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.promotional_offer import PromotionalOfferSignatureCreator
from appstoreserverlibrary.receipt_utility import ReceiptUtility


class RecordingKey:
    """A private key that remembers the bytes it signs and signs them with the real key."""

    def __init__(self, key):
        self.key = key
        self.signed = None

    def sign(self, data, algorithm):
        self.signed = data
        return self.key.sign(data, algorithm)


def frozen_clock(instant):
    """A stand-in for the datetime module whose now() is always `instant`."""

    class Frozen(datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            return instant if tz is None else instant.astimezone(tz)

        @classmethod
        def utcnow(cls):
            return instant.replace(tzinfo=None)

    return types.SimpleNamespace(datetime=Frozen, timedelta=datetime.timedelta, timezone=datetime.timezone)


def public_key(pem):
    return serialization.load_pem_private_key(pem.encode(), password=None).public_key()


def verifies(token, pem, audience):
    try:
        jwt.decode(token, public_key(pem), algorithms=["ES256"], audience=audience,
                   options={"verify_exp": False, "verify_iat": False, "verify_nbf": False})
        return True
    except jwt.InvalidTokenError:
        return False


def promotional_offer(request):
    creator = PromotionalOfferSignatureCreator(request["key"].encode(), request["keyId"], request["bundleId"])
    recorder = RecordingKey(creator._signing_key)
    creator._signing_key = recorder
    signature = creator.create_signature(request["productId"], request["offerId"], request["appAccountToken"],
                                         uuid.UUID(request["nonce"]), request["timestamp"])
    try:
        public_key(request["key"]).verify(base64.b64decode(request["vouchSignature"]), recorder.signed,
                                          ec.ECDSA(hashes.SHA256()))
        vouch_verifies = True
    except InvalidSignature:
        vouch_verifies = False
    return {"signedText": base64.b64encode(recorder.signed).decode(), "signature": signature,
            "vouchSignatureVerifies": vouch_verifies}


def jws(request):
    instant = datetime.datetime.fromtimestamp(request["issuedAt"], datetime.timezone.utc)
    jws_creator.datetime = frozen_clock(instant)
    jws_creator.uuid = types.SimpleNamespace(uuid4=lambda: uuid.UUID(request["nonce"]))
    arguments = (request["key"].encode(), request["keyId"], request["issuerId"], request["bundleId"])
    kind = request["kind"]
    if kind == "promotional-offer":
        token = jws_creator.PromotionalOfferV2SignatureCreator(*arguments).create_signature(
            request["productId"], request["offerIdentifier"], request.get("transactionId"))
    elif kind == "introductory-offer-eligibility":
        token = jws_creator.IntroductoryOfferEligibilitySignatureCreator(*arguments).create_signature(
            request["productId"], request["allowIntroductoryOffer"], request["transactionId"])
    else:
        token = jws_creator.AdvancedCommerceAPIInAppSignatureCreator(*arguments).create_signature(
            advanced_commerce_request(request["request"]))
    return {"token": token, "appleVerifies": verifies(token, request["key"], kind),
            "vouchVerifies": verifies(request["vouchToken"], request["key"], kind)}


def advanced_commerce_request(data):
    """Apple's model of the request the test describes as JSON, built from Apple's own classes."""
    from appstoreserverlibrary.models import (AdvancedCommerceDescriptors, AdvancedCommerceOffer,
                                              AdvancedCommerceOfferPeriod, AdvancedCommerceOfferReason,
                                              AdvancedCommerceOneTimeChargeCreateRequest,
                                              AdvancedCommerceOneTimeChargeItem, AdvancedCommercePeriod,
                                              AdvancedCommerceRequestInfo, AdvancedCommerceSubscriptionCreateItem,
                                              AdvancedCommerceSubscriptionCreateRequest)
    info = data["requestInfo"]
    request_info = AdvancedCommerceRequestInfo.AdvancedCommerceRequestInfo(
        requestReferenceId=uuid.UUID(info["requestReferenceId"]),
        appAccountToken=uuid.UUID(info["appAccountToken"]) if "appAccountToken" in info else None)
    if data["operation"] == "CREATE_ONE_TIME_CHARGE":
        item = data["item"]
        return AdvancedCommerceOneTimeChargeCreateRequest.AdvancedCommerceOneTimeChargeCreateRequest(
            requestInfo=request_info, currency=data["currency"], taxCode=data["taxCode"],
            storefront=data.get("storefront"),
            item=AdvancedCommerceOneTimeChargeItem.AdvancedCommerceOneTimeChargeItem(
                SKU=item["SKU"], description=item["description"], displayName=item["displayName"],
                price=item["price"]))
    items = []
    for item in data["items"]:
        offer = None
        if "offer" in item:
            offer = AdvancedCommerceOffer.AdvancedCommerceOffer(
                periodCount=item["offer"]["periodCount"], price=item["offer"]["price"],
                period=AdvancedCommerceOfferPeriod.AdvancedCommerceOfferPeriod(item["offer"]["period"]),
                reason=AdvancedCommerceOfferReason.AdvancedCommerceOfferReason(item["offer"]["reason"]))
        items.append(AdvancedCommerceSubscriptionCreateItem.AdvancedCommerceSubscriptionCreateItem(
            SKU=item["SKU"], description=item["description"], displayName=item["displayName"],
            price=item["price"], offer=offer))
    return AdvancedCommerceSubscriptionCreateRequest.AdvancedCommerceSubscriptionCreateRequest(
        requestInfo=request_info, currency=data["currency"], taxCode=data["taxCode"], items=items,
        descriptors=AdvancedCommerceDescriptors.AdvancedCommerceDescriptors(
            description=data["descriptors"]["description"], displayName=data["descriptors"]["displayName"]),
        period=AdvancedCommercePeriod.AdvancedCommercePeriod(data["period"]))


def api_token(request):
    instant = datetime.datetime.fromtimestamp(request["now"], datetime.timezone.utc)
    api_client.datetime = frozen_clock(instant)
    client = api_client.AppStoreServerAPIClient(request["key"].encode(), request["keyId"], request["issuerId"],
                                                request["bundleId"], Environment.SANDBOX)
    token = client._generate_token()
    return {"token": token, "appleVerifies": verifies(token, request["key"], "appstoreconnect-v1"),
            "vouchVerifies": verifies(request["vouchToken"], request["key"], "appstoreconnect-v1")}


def extracted(extract, receipts):
    results = []
    for receipt in receipts:
        try:
            found = extract(receipt)
            results.append({"none": True} if found is None else {"id": found})
        except Exception as error:  # Apple's utility raises on some malformed input
            results.append({"exception": type(error).__name__})
    return {"results": results}


def main():
    command = sys.argv[1]
    request = json.load(sys.stdin)
    utility = ReceiptUtility()
    handlers = {
        "promotional-offer": promotional_offer,
        "jws": jws,
        "api-token": api_token,
        "transaction-receipts": lambda r: extracted(utility.extract_transaction_id_from_transaction_receipt,
                                                    r["receipts"]),
        "app-receipts": lambda r: extracted(utility.extract_transaction_id_from_app_receipt, r["receipts"]),
    }
    json.dump(handlers[command](request), sys.stdout)


main()
