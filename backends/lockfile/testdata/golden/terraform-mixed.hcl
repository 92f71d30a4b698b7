# This file is maintained automatically by "terraform init".
# Manual edits may be lost in future updates.

provider "a.example/zeta/omega" {
  version     = "3.0.0"
  constraints = "> 1.0.0, != 2.9.0, >= 3.0.0, 3.0.0, < 4.0.0"
  hashes = [
    "h1:OKKYtOuXCTMYj34CyB4D20eosNJLNFy2wPeNZ/aDOeo=",
  ]
}

provider "example.com/acme/gamma" {
  version     = "2.0.0-beta1"
  constraints = "2.0.0-beta1"
  hashes = [
    "h1:gZjbOfkKKT7ffubKAzlbcJ+Hc3+jpII9ewh/vn1jFtE=",
  ]
}

provider "bücher.example/acme/delta" {
  version = "0.1.0"
  hashes = [
    "h1:LT9YMcw8Y9/vX7lt6y/jQGb5jYtWFYha9qizLl6Z5Hs=",
  ]
}
