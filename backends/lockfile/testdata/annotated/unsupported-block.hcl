gadget "x" { # ERROR: Unsupported block type
}
