fn main() -> std::process::ExitCode {
    tessera::launch::main("release-gate", |setup| {
        release_gate::release_gate(setup.server("release-gate", "0.1.0")).build()
    })
}
