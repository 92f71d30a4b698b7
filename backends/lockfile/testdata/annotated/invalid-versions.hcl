provider "example.com/acme/empty" {
  version = "" # ERROR: Invalid provider version number
}

provider "example.com/acme/prefixed" {
  version = "v2.0.0" # ERROR: Invalid provider version number
}

provider "example.com/acme/two-parts" {
  version = "2.0" # ERROR: Invalid provider version number
}

provider "example.com/acme/one-part" {
  version = "2" # ERROR: Invalid provider version number
}

provider "example.com/acme/padded" {
  version = "2.01" # ERROR: Invalid provider version number
}

provider "example.com/acme/absent" { # ERROR: Missing required argument
}

provider "example.com/acme/null" {
  version = null # ERROR: Missing required argument
}
