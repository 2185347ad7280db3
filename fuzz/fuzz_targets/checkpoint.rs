#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| perceptron_fuzz::checkpoint(data));
