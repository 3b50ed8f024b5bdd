/* The learned injection scorer's inner loop, compiled: see graphs/guards/ngrams.py.

   window_sums(text, starts, width, weights, multipliers, mix, shift) returns, for each
   start, the dot product of the window's n-gram features with `weights`: the window is
   text[start : start + width] padded with a space on each side, every n-gram of 1 to
   len(multipliers) code points is hashed as ngrams.py hashes it (a rolling uint64 hash,
   wrapping, times the length's multiplier, shifted right by `shift`, masked to the
   buckets), each distinct bucket's weight is summed once in float64, and the sum is
   divided by the square root of the number of distinct buckets.

   The weights hold float16 values (as float32), so the float64 sum is exact whatever the
   order: the result is bit for bit what the numpy version computes. The hashing runs
   without the GIL. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_N 8

typedef struct {
    const Py_UCS4 *points;  /* the whole text's code points */
    Py_ssize_t length;
    const float *weights;
    uint64_t mask;          /* buckets - 1 (buckets is a power of two) */
    uint64_t multipliers[MAX_N];
    int max_n;
    uint64_t mix;
    int shift;
    uint64_t *seen;         /* one bit per bucket, all clear between windows */
    uint32_t *touched;      /* the buckets set in `seen` by the current window */
} Hasher;

static double window_sum(Hasher *h, Py_ssize_t start, Py_ssize_t width) {
    Py_ssize_t end = start + width < h->length ? start + width : h->length;
    Py_ssize_t inner = end > start ? end - start : 0;
    Py_ssize_t padded = inner + 2;
    /* One accumulator per n-gram length: the sums are exact, so their order is free, and
       separate chains of additions keep the processor busy. */
    double sums[MAX_N] = {0.0};
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < padded; i++) {
        uint64_t rolling = 0;
        Py_ssize_t fits = padded - i < h->max_n ? padded - i : h->max_n;
        for (Py_ssize_t k = 0; k < fits; k++) {
            Py_ssize_t at = i + k; /* position in the padded window */
            uint64_t point = (at == 0 || at == padded - 1) ? (uint64_t)' '
                                                          : (uint64_t)h->points[start + at - 1];
            rolling = rolling * h->mix + point;
            uint32_t bucket = (uint32_t)(((rolling * h->multipliers[k]) >> h->shift) & h->mask);
            uint64_t word = h->seen[bucket >> 6];
            uint64_t bit = (uint64_t)1 << (bucket & 63);
            /* Without a branch: whether a bucket is new is a coin toss for the predictor. */
            uint64_t fresh = (word & bit) == 0;
            h->seen[bucket >> 6] = word | bit;
            h->touched[count] = bucket;
            count += (Py_ssize_t)fresh;
            sums[k] += (double)h->weights[bucket] * (double)fresh;
        }
    }
    for (Py_ssize_t j = 0; j < count; j++) {
        h->seen[h->touched[j] >> 6] = 0;
    }
    double sum = 0.0;
    for (int k = 0; k < h->max_n; k++) {
        sum += sums[k];
    }
    return sum / sqrt((double)(count > 0 ? count : 1));
}

static PyObject *window_sums(PyObject *module, PyObject *args) {
    PyObject *text, *starts_arg, *multipliers_arg;
    Py_ssize_t width;
    Py_buffer weights;
    unsigned long long mix;
    int shift;
    (void)module;
    if (!PyArg_ParseTuple(args, "UOny*OKi", &text, &starts_arg, &width, &weights,
                          &multipliers_arg, &mix, &shift)) {
        return NULL;
    }
    PyObject *result = NULL, *starts = NULL, *multipliers = NULL;
    Py_UCS4 *points = NULL;
    uint64_t *seen = NULL;
    uint32_t *touched = NULL;
    double *sums = NULL;
    Py_ssize_t buckets = weights.len / (Py_ssize_t)sizeof(float);
    if (buckets < 1 || (buckets & (buckets - 1)) != 0 || weights.len % sizeof(float) != 0) {
        PyErr_SetString(PyExc_ValueError, "weights must hold a power of two of float32 values");
        goto done;
    }
    if (width < 0 || shift < 0 || shift > 63) {
        PyErr_SetString(PyExc_ValueError, "width must be >= 0 and shift in 0..63");
        goto done;
    }
    multipliers = PySequence_Fast(multipliers_arg, "multipliers must be a sequence");
    starts = PySequence_Fast(starts_arg, "starts must be a sequence");
    if (multipliers == NULL || starts == NULL) {
        goto done;
    }
    Hasher h;
    h.max_n = (int)PySequence_Fast_GET_SIZE(multipliers);
    if (h.max_n < 1 || h.max_n > MAX_N) {
        PyErr_SetString(PyExc_ValueError, "between 1 and 8 multipliers");
        goto done;
    }
    for (int n = 0; n < h.max_n; n++) {
        h.multipliers[n] = PyLong_AsUnsignedLongLongMask(PySequence_Fast_GET_ITEM(multipliers, n));
        if (PyErr_Occurred()) {
            goto done;
        }
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(starts);
    sums = PyMem_Malloc(sizeof(double) * (size_t)(count > 0 ? count : 1));
    Py_ssize_t *offsets = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(count > 0 ? count : 1));
    if (sums == NULL || offsets == NULL) {
        PyMem_Free(offsets);
        PyErr_NoMemory();
        goto done;
    }
    h.length = PyUnicode_GET_LENGTH(text);
    for (Py_ssize_t j = 0; j < count; j++) {
        offsets[j] = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(starts, j));
        if (offsets[j] == -1 && PyErr_Occurred()) {
            PyMem_Free(offsets);
            goto done;
        }
        if (offsets[j] < 0 || offsets[j] > h.length) {
            PyMem_Free(offsets);
            PyErr_SetString(PyExc_ValueError, "a start lies outside the text");
            goto done;
        }
    }
    points = PyUnicode_AsUCS4Copy(text);
    Py_ssize_t most = width < h.length ? width : h.length;
    seen = calloc((size_t)(buckets + 63) / 64, sizeof(uint64_t));
    touched = malloc(sizeof(uint32_t) * (size_t)((most + 2) * h.max_n));
    if (points == NULL || seen == NULL || touched == NULL) {
        PyMem_Free(offsets);
        if (!PyErr_Occurred()) {
            PyErr_NoMemory();
        }
        goto done;
    }
    h.points = points;
    h.weights = (const float *)weights.buf;
    h.mask = (uint64_t)buckets - 1;
    h.mix = (uint64_t)mix;
    h.shift = shift;
    h.seen = seen;
    h.touched = touched;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t j = 0; j < count; j++) {
        sums[j] = window_sum(&h, offsets[j], width);
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(offsets);
    result = PyList_New(count);
    if (result == NULL) {
        goto done;
    }
    for (Py_ssize_t j = 0; j < count; j++) {
        PyObject *value = PyFloat_FromDouble(sums[j]);
        if (value == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, j, value);
    }
done:
    PyBuffer_Release(&weights);
    Py_XDECREF(starts);
    Py_XDECREF(multipliers);
    PyMem_Free(points);
    PyMem_Free(sums);
    free(seen);
    free(touched);
    return result;
}

static PyMethodDef methods[] = {
    {"window_sums", window_sums, METH_VARARGS,
     "window_sums(text, starts, width, weights, multipliers, mix, shift) -> list[float]\n\n"
     "Per start, the unit-length binary n-gram features of the padded window dotted with\n"
     "the float32 `weights` (see graphs/guards/ngrams.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ngram_sums",
    "The injection scorer's n-gram hashing and weight sums, compiled.", -1, methods,
};

PyMODINIT_FUNC PyInit__ngram_sums(void) { return PyModule_Create(&module); }
