"""The nnabla extension context from the command line's -c/-d/-t (or anything with those attributes)."""
from gan_sru import GanSruError


def set_context(args):
    import nnabla as nn
    from nnabla.ext_utils import get_extension_context

    try:
        ctx = get_extension_context(args.context, device_id=args.device_id, type_config=args.type_config)
    except Exception as e:  # nnabla raises plain ImportError/ValueError for a missing extension
        raise GanSruError(f"--context {args.context}: cannot load the nnabla extension ({e}); "
                          "for a GPU install the CUDA extra: pip install -e .[cuda]") from e
    nn.set_default_context(ctx)
    return ctx
