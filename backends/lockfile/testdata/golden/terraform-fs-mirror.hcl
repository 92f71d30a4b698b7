# This file is maintained automatically by "terraform init".
# Manual edits may be lost in future updates.

provider "example.com/acme/alpha" {
  version     = "1.2.0"
  constraints = ">= 1.0.0, < 2.0.0"
  hashes = [
    "h1:3p+aRKmZbeePS+ouWjGDyzJMp/zEq21o5Lvw3apGFwU=",
    "h1:FeLLwaV+36aBkoVCijUVO8SbPg6dQrfeQDRs6fW0e9A=",
    "h1:G/tYla5/QH/yXVgeFWnspPwRrTdwZCldCqvTUjSjTMw=",
    "h1:SzfcXqHcqEqJ6vMaVl3Va9ZRs5AYdLkusB5d3ARvS+Y=",
  ]
}

provider "example.com/acme/beta" {
  version     = "1.2.0"
  constraints = "~> 1.2"
  hashes = [
    "h1:4bp0mtFuKbvu3nEoLgGYL2MHci+tgpHoAyT+R5t3xdQ=",
    "h1:X3X/cP09yROj4l7giOgU97qWCLkLCiIezkpodWxRrZY=",
    "h1:kKJRs19SGGx3KTUQZiduINhJJcYrgcdROXTe1bZCNHA=",
    "h1:x0J8u0zJ3AyV1WdITlj45q2yqBffMqov92/+CqVAQIM=",
  ]
}
