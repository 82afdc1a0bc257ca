module {
  func.func @layer() {
    return
  }
}
