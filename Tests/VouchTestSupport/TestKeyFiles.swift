/// Key files of the shapes a signing test needs and no code makes: test keys, for tests only.
public enum TestKeyFiles {
    /// An EC P-256 key encrypted with PKCS #8 (`openssl pkcs8 -topk8 -v2 aes-256-cbc`, passphrase `test`).
    public static let encryptedPKCS8 = """
        -----BEGIN ENCRYPTED PRIVATE KEY-----
        MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAj1fUlT8lF0bgICCAAw
        DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEECN0U3IEt8kqTTcI33i5MHcEgZCf
        Oukcc95fn9Hs1G4kSNr6BfMRKr8HobVDqmdq7FhQ1+xBiET9nzzxt5g1S3zwzW38
        TERie/tBuDQnwt4Wm0nploMJuXFA32q7dOOuFL5aTnzXWgrXeYSbjqlah1wcofFp
        Wtn0/qttYgpJUyWlL3V0dwUfoFzldMMd/WhZXkLSJ8Q4zknAos1r5P29oOwN2Ak=
        -----END ENCRYPTED PRIVATE KEY-----
        """
}
