"""`gan-sru export`: the trained generator as one file for inference without this project.

    gan-sru export --run runs/sines --format onnx --out generator.onnx [--checkpoint STEP]
                   [--batch-size 64] [--length L]

Writes FILE complete or not at all: `.nnp` for nnabla, `.onnx` for onnxruntime and other ONNX runtimes.
The network's inputs and output (a conditional run's attributes and Gumbel noise among them), its fixed sizes,
its weights and the `.onnx` file's metadata: gan_sru/export.py.
"""
from gan_sru.export import DEFAULT_BATCH_SIZE, export_generator


def main(args):
    batch_size = DEFAULT_BATCH_SIZE if args.batch_size is None else args.batch_size
    info = export_generator(args.run, args.out, args.format, step=args.checkpoint, batch_size=batch_size,
                            length=args.length)
    L = info["output"][1]
    if L > info["max_len"]:
        print(f"note: --length {L} is longer than the run's training sequences ({info['max_len']} steps); "
              "the generator's time feature runs past the range it was trained on")
    shapes = ", ".join(f"{k} {v}" for k, v in info["inputs"].items())
    print(f"exported the generator of {info['run']}, checkpoint step {info['step']} ({info['weights']} weights), "
          f"to {info['path']} ({info['format']})")
    print(f"  inputs: {shapes} (float32, batch-major; noise standard normal, mask 1 at valid steps"
          + ("; attributes encoded as the file's metadata says" if "attributes" in info["inputs"] else "")
          + ("; gumbel_noise Gumbel(0, 1)" if "gumbel_noise" in info["inputs"] else "") + ")")
    print(f"  output: samples {info['output']} (float32, data units, 0 at padded steps"
          + ("; categories one-hot after the features" if "gumbel_noise" in info["inputs"] else "") + ")")
    return 0
