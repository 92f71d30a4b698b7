# Every error-free shape: a version alone, with constraints, with hashes of
# schemes the clients keep without knowing them.

provider "example.com/acme/only-version" {
  version = "2.0.0"
}

provider "example.com/acme/with-constraints" {
  version     = "0.4.1"
  constraints = ">= 0.4.0, < 0.5.0"
}

provider "example.com/acme/everything" {
  version     = "10.0.3"
  constraints = "~> 10.0"

  hashes = [
    "x1:first-unknown-scheme",
    "x1:second-unknown-scheme",
  ]
}
