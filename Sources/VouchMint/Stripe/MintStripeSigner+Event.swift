public import VouchMintPKI
public import VouchStripe

extension MintStripeSigner {
    /// The delivery of a minted `event`, signed two seconds after it was created or at
    /// `signedAt` (seconds since 1970: a retry, days later, is signed anew).
    public func delivery(_ event: MintStripe.Event, signedAt: Int64? = nil) throws(MintError) -> StripeDelivery {
        try delivery(event: event.json, created: event.created, signedAt: signedAt)
    }

    /// A broken delivery of a minted `event`: what a verifier given `secrets`
    /// must refuse with `defect`'s ``MintStripeDefect/expectedErrorCode``.
    public func tampered(_ defect: MintStripeDefect, _ event: MintStripe.Event, signedAt: Int64? = nil)
        throws(MintError) -> StripeDelivery
    {
        try tampered(defect, event: event.json, created: event.created, signedAt: signedAt)
    }
}
