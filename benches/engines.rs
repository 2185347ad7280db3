//! Criterion harness: the margin engines and the training loop on generated
//! data. `cargo bench --bench engines` (a GPU adapter is used when present;
//! set PERCEPTRON_BENCH_GPU=0 to skip it). Whole-run comparisons with
//! scikit-learn live in `perceptron bench` and BENCHMARKS.md.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use perceptron::data::Dataset;
use perceptron::engine::cpu::CpuEngine;
use perceptron::engine::gpu::{AdapterRequest, GpuEngine, GpuOptions};
use perceptron::engine::{MarginEngine, Pass};
use perceptron::r#gen::{Density, GenOptions, Generator};
use perceptron::train::{self, PassPolicy, ReferenceEngine, Silent, State, TrainParams};

/// Separable data with a planted margin, plus label noise when asked.
fn data(rows: u64, features: u64, density: Density, noise: f64) -> Dataset<f32> {
    let generated = Generator::new(GenOptions {
        rows,
        features,
        density,
        noise,
        seed: 7,
        ..Default::default()
    })
    .and_then(|g| g.generate::<f32>())
    .expect("generate");
    Dataset::from_raw(generated.raw, std::path::Path::new("generated"), None).expect("labels")
}

fn gpu_wanted() -> bool {
    std::env::var("PERCEPTRON_BENCH_GPU").map_or(true, |v| v != "0")
}

/// One full margin pass (every row's certified slack) per iteration.
fn margin_pass(c: &mut Criterion) {
    let mut group = c.benchmark_group("margin pass");
    group.sample_size(10);
    let cases = [
        ("dense 200k x 256", data(200_000, 256, Density::Dense, 0.0)),
        (
            "sparse 200k x 100k nnz 64",
            data(200_000, 100_000, Density::Sparse { nnz: 64 }, 0.0),
        ),
    ];
    for (name, d) in &cases {
        group.throughput(Throughput::Bytes(d.features.storage_bytes() as u64));
        let weights: Vec<f32> = (0..d.cols() + 1)
            .map(|k| ((k % 13) as f32 - 6.0) * 0.01)
            .collect();
        let pass = Pass {
            start: 0,
            end: d.rows(),
            weights: &weights,
            tau: 0.0,
            heads: 1,
        };
        let mut out = vec![0f32; d.rows()];
        let mut cpu = CpuEngine::new(d, true);
        group.bench_function(BenchmarkId::new("cpu", name), |b| {
            b.iter(|| {
                cpu.submit(&pass).unwrap();
                cpu.collect(&mut out).unwrap();
            })
        });
        if gpu_wanted() {
            let opts = GpuOptions {
                adapter: AdapterRequest {
                    name: None,
                    allow_software: true,
                },
                ..Default::default()
            };
            if let Ok(mut gpu) = GpuEngine::new(d, true, &opts) {
                let pass = Pass {
                    end: d.rows().min(gpu.max_pass()),
                    ..pass
                };
                let mut out = vec![0f32; pass.len()];
                group.bench_function(BenchmarkId::new(gpu.name(), name), |b| {
                    b.iter(|| {
                        gpu.submit(&pass).unwrap();
                        gpu.collect(&mut out).unwrap();
                    })
                });
            }
        }
    }
    group.finish();
}

/// Whole training runs (5 epochs at most) with each engine.
fn training(c: &mut Criterion) {
    let mut group = c.benchmark_group("train 5 epochs");
    group.sample_size(10);
    let cases = [
        (
            "dense 50k x 128 separable",
            data(50_000, 128, Density::Dense, 0.0),
        ),
        (
            "dense 50k x 128 noise 5%",
            data(50_000, 128, Density::Dense, 0.05),
        ),
        (
            "sparse 50k x 20k nnz 32 noise 5%",
            data(50_000, 20_000, Density::Sparse { nnz: 32 }, 0.05),
        ),
    ];
    let params = TrainParams {
        max_epochs: 5,
        ..Default::default()
    };
    for (name, d) in &cases {
        group.throughput(Throughput::Bytes(5 * d.features.storage_bytes() as u64));
        let dim = d.cols() + 1;
        group.bench_function(BenchmarkId::new("reference", name), |b| {
            b.iter(|| train::fit_reference(d, &params.check_ref().unwrap()).unwrap())
        });
        for policy in [PassPolicy::Adaptive, PassPolicy::Always] {
            let p = TrainParams {
                passes: policy,
                ..params.clone()
            };
            group.bench_function(BenchmarkId::new(format!("cpu {policy:?}"), name), |b| {
                b.iter(|| {
                    let mut fb = || -> Box<dyn MarginEngine<f32>> { Box::new(ReferenceEngine) };
                    train::fit(
                        d,
                        &p.check_ref().unwrap(),
                        State::initial(dim),
                        Box::new(CpuEngine::new(d, true)),
                        &mut fb,
                        &mut Silent,
                    )
                    .unwrap()
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, row_kernels, margin_pass, training);
criterion_main!(benches);

/// The per-row kernels: the reference dot (sequential, latency-bound) and
/// the fast 8-lane margin with its certificate.
fn row_kernels(c: &mut Criterion) {
    use perceptron::data::Row;
    use perceptron::engine::certify::Bound;
    let mut group = c.benchmark_group("row kernels");
    for d in [128usize, 784] {
        let x: Vec<f32> = (0..d).map(|k| ((k * 37 % 101) as f32) * 0.01).collect();
        let w: Vec<f32> = (0..d + 1)
            .map(|k| ((k * 53 % 97) as f32 - 48.0) * 0.001)
            .collect();
        let bound = Bound::<f32>::for_weights(&w, 1e3);
        group.throughput(Throughput::Bytes(4 * d as u64));
        group.bench_function(BenchmarkId::new("reference dot", d), |b| {
            b.iter(|| {
                perceptron::engine::reference::dot(
                    std::hint::black_box(&w),
                    Row::Dense(std::hint::black_box(&x)),
                    true,
                )
            })
        });
        group.bench_function(BenchmarkId::new("fast margin + decide", d), |b| {
            b.iter(|| {
                let (s, t) = perceptron::engine::cpu::margin(
                    std::hint::black_box(&w),
                    Row::Dense(std::hint::black_box(&x)),
                    true,
                );
                bound.decide(1, s, t, (d + 1) as f32)
            })
        });
    }
    group.finish();
}
