"""The data-parallel backend of CUDA contexts (see train/distributed.py). The test suite runs without GPUs
and covers only its refusal; it follows nnabla's documented communicator API."""
import numpy as np

from gan_sru import GanSruError

from .distributed import MpiCommunicator


class NcclCommunicator(MpiCommunicator):
    """CUDA contexts: the gradients all-reduced on the device by nnabla's MultiProcessDataParallelCommunicator
    (NCCL); broadcasts and agreements through mpi4py, written against nnabla's documented API (not run by
    the tests, which have no GPUs). nnabla-ext-cuda loads Open MPI's libmpi.so at run time (OMPI_HOME, then
    the loader's path); it must be the MPI that mpi4py uses and that launched the job."""
    backend = "nccl"

    def __init__(self, MPI, launch, context, type_config):
        super().__init__(MPI, launch)
        try:
            import nnabla.communicators as C
            from nnabla.ext_utils import get_extension_context

            ctx = get_extension_context(context, device_id=str(self.local_rank), type_config=type_config)
            self.nccl = C.MultiProcessDataParallelCommunicator(ctx)
            self.nccl.init()
        except Exception as e:  # nnabla raises plain RuntimeError/ImportError for a missing extension or library
            raise GanSruError(
                f"--context {context} under {launch.launcher}: nnabla's MultiProcessDataParallelCommunicator could "
                f"not start ({e}); it needs nnabla-ext-cuda with NCCL and Open MPI's libmpi.so (set OMPI_HOME to "
                "the Open MPI prefix whose mpirun launched the job)") from e
        self.device_id = str(self.nccl.local_rank)  # one GPU per rank on each node

    def all_reduce_mean(self, params, extras=()):
        import nnabla as nn

        arrays = [p.grad for p in params]
        tail = nn.NdArray.from_numpy_array(np.asarray(extras, np.float32)) if len(extras) else None
        if tail is not None:
            arrays.append(tail)
        self._wait()
        if not self.measure_wait:
            self.barrier()  # bounded by train.peer_timeout: NCCL itself would wait for a stalled rank forever
        # inplace=False: nnabla copies the list into one device buffer and makes one NCCL call
        self.nccl.all_reduce(arrays, division=True, inplace=False)
        self.bytes_reduced += 4 * sum(a.size for a in arrays)
        self.reductions += 1
        return [float(x) for x in tail.data] if tail is not None else []
