"""Memory readings for the profile: the process's RSS and its high-water mark from /proc, the device's memory
in use, and the frees that make them count live memory only."""


def proc_status_mib(field):
    """The /proc/self/status field `field` ("VmRSS", "VmHWM", ...) in MiB, or None where there is no /proc."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def reset_peak_rss():
    """Reset the kernel's RSS high-water mark (VmHWM) to the current RSS; False where not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def device_used_mib(context):
    """Device memory in use (total - free, all processes on the device) in MiB; None off CUDA or without CuPy."""
    if not context.is_cuda:
        return None
    try:
        import cupy

        with cupy.cuda.Device(int(context.device_id)):
            free, total = cupy.cuda.runtime.memGetInfo()
        return (total - free) / 2 ** 20
    except Exception:  # no CuPy or no driver: the report says "n/a" rather than failing the profile
        return None


def return_free_heap():
    """glibc's malloc_trim(0): hand freed heap pages back to the kernel, so RSS counts live memory only."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def free_cupy_pool(context):
    if context.is_cuda:
        try:
            import cupy

            cupy.get_default_memory_pool().free_all_blocks()
        except ImportError:
            pass
