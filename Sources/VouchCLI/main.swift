print("vouch")
