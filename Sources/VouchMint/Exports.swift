// `import VouchMint` gives the test PKI too: the scenarios are signed with its authorities and
// signers, and code written against the one module before the split keeps building.
@_exported public import VouchMintPKI
