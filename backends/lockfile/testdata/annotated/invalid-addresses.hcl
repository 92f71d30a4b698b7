provider "" { # ERROR: Invalid provider source address
}

provider "acme/widget" { # ERROR: Invalid provider source address
}

provider "widget" { # ERROR: Invalid provider source address
}

provider "example.com/acme/widget/extra" { # ERROR: Invalid provider source address
}

provider "Example.com/acme/widget" { # ERROR: Non-normalized provider source address
}

provider "example.com/ACME/widget" { # ERROR: Non-normalized provider source address
}

provider "example.com/acme/Widget" { # ERROR: Non-normalized provider source address
}

provider "example.com/acme/twice" {
  version = "1.0.0"
}

# A second block is a duplicate even when its own body is also wrong.
provider "example.com/acme/twice" { # ERROR: Duplicate provider lock
}

# Legacy providers existed only for the 0.13 upgrade.
provider "registry.terraform.io/-/widget" { # ERROR: Invalid provider source address
}

# Built-in providers have no version of their own.
provider "terraform.io/builtin/terraform" { # ERROR: Invalid provider source address
}
