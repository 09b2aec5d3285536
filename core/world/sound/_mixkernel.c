/* The mixer's sample loops, compiled: the same arithmetic as the numpy kernel (core/world/sound/kernel.py),
 * in the same order, one IEEE float32 rounding per operation, so both give the same bits.
 *
 * Why compiled: a block of the world's sound is about a hundred numpy calls on short rows, and numpy's cost
 * per call, not per sample, is most of it (README, Performance). Here each sound costs one call.
 *
 * Built with -ffp-contract=off (setup.py): a compiler that fused step * frac + first into one rounding (FMA)
 * would change the last bit of some gains and break that equality. Only the buffer protocol is used, so it
 * needs Python's headers alone, not numpy's. It reads and writes only the arrays it is given, after checking
 * every index against their sizes. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static int get_buffer(PyObject *obj, Py_buffer *view, int writable, const char *format, const char *name) {
    int flags = PyBUF_FORMAT | PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous%s array", name, writable ? " writable" : "");
        return -1;
    }
    if (view->format == NULL || strcmp(view->format, format) != 0) {
        PyErr_Format(PyExc_TypeError, "%s must hold %s, not %s", name,
                     format[0] == 'f' ? "float32" : (format[0] == 'h' ? "int16" : "bool"),
                     view->format ? view->format : "bytes");
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* weigh(out, stride, a, b, signal, base_left, base_right, gains, audible, row, ticks, frac, still, write)
 *
 * For each ear e and sample i in [a, b) of the block: out[e * stride + i] (+)= signal[base_e + i] * gain_e(i).
 * The gains of sound `row` at the block's tick boundaries are gains[row] (ears, ticks + 1); within tick
 * k = i // spt the gain moves in a straight line, first + step * frac[i % spt], with first = g[k] and step =
 * g[k + 1] - g[k] where audible[row, k], else 0 (a tick too quiet to hear at both ends is left out). still:
 * every tick's gains are the first's. write: out = the product, else out + the product. */
static PyObject *weigh(PyObject *self, PyObject *args) {
    PyObject *out_obj, *signal_obj, *gains_obj, *audible_obj, *frac_obj;
    Py_ssize_t stride, a, b, bases[2], row, ticks;
    int still, write;
    if (!PyArg_ParseTuple(args, "OnnnOnnOOnnOpp", &out_obj, &stride, &a, &b, &signal_obj, &bases[0], &bases[1],
                          &gains_obj, &audible_obj, &row, &ticks, &frac_obj, &still, &write))
        return NULL;
    Py_buffer out, signal, gains, audible, frac;
    if (get_buffer(out_obj, &out, 1, "f", "out") < 0) return NULL;
    if (get_buffer(signal_obj, &signal, 0, "f", "signal") < 0) goto release_out;
    if (get_buffer(gains_obj, &gains, 0, "f", "gains") < 0) goto release_signal;
    if (get_buffer(audible_obj, &audible, 0, "?", "audible") < 0) goto release_gains;
    if (get_buffer(frac_obj, &frac, 0, "f", "frac") < 0) goto release_audible;
    Py_ssize_t out_len = out.len / 4, signal_len = signal.len / 4, spt = frac.len / 4, knots = ticks + 1;
    if (spt <= 0 || ticks <= 0 || a < 0 || b < a || stride < b || out_len < stride + b || b > ticks * spt
        || row < 0 || gains.len / 4 < (row + 1) * 2 * knots || audible.len < (row + 1) * ticks) {
        PyErr_SetString(PyExc_ValueError, "weigh: the span does not fit the mix, the gains or the ticks");
        goto release_all;
    }
    for (int ear = 0; ear < 2; ear++) {
        if (a < b && (bases[ear] + a < 0 || bases[ear] + b > signal_len)) {
            PyErr_SetString(PyExc_ValueError, "weigh: the span reads past the sound's samples");
            goto release_all;
        }
    }
    const float *fr = (const float *)frac.buf;
    const char *heard = (const char *)audible.buf + row * ticks;
    for (int ear = 0; ear < 2; ear++) {
        float *o = (float *)out.buf + ear * stride;
        const float *s = (const float *)signal.buf + bases[ear];
        const float *g = (const float *)gains.buf + (row * 2 + ear) * knots;
        for (Py_ssize_t k = a / spt; k * spt < b; k++) {
            Py_ssize_t lo = k * spt > a ? k * spt : a, hi = (k + 1) * spt < b ? (k + 1) * spt : b;
            if (still) {
                float gain = g[0];
                if (write)
                    for (Py_ssize_t i = lo; i < hi; i++) o[i] = s[i] * gain;
                else
                    for (Py_ssize_t i = lo; i < hi; i++) o[i] = o[i] + s[i] * gain;
                continue;
            }
            float first = heard[k] ? g[k] : 0.0f, step = heard[k] ? g[k + 1] - g[k] : 0.0f;
            const float *f = fr - k * spt; /* f[i] is frac[i % spt] within tick k */
            if (write)
                for (Py_ssize_t i = lo; i < hi; i++) o[i] = (step * f[i] + first) * s[i];
            else
                for (Py_ssize_t i = lo; i < hi; i++) o[i] = o[i] + (step * f[i] + first) * s[i];
        }
    }
    PyBuffer_Release(&frac);
    PyBuffer_Release(&audible);
    PyBuffer_Release(&gains);
    PyBuffer_Release(&signal);
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
release_all:
    PyBuffer_Release(&frac);
release_audible:
    PyBuffer_Release(&audible);
release_gains:
    PyBuffer_Release(&gains);
release_signal:
    PyBuffer_Release(&signal);
release_out:
    PyBuffer_Release(&out);
    return NULL;
}

/* bake(baked, signal, base_left, base_right, gain_left, gain_right, scale): a brief sound as each ear hears
 * it, at a fixed gain: baked[e, j] = signal[base_e + j] * (gain_e * scale), baked (2, length). The gains and
 * scale are float32 values (exact in a double), multiplied in float32 as numpy does. */
static PyObject *bake(PyObject *self, PyObject *args) {
    PyObject *baked_obj, *signal_obj;
    Py_ssize_t bases[2];
    double gain_args[2], scale_arg;
    if (!PyArg_ParseTuple(args, "OOnnddd", &baked_obj, &signal_obj, &bases[0], &bases[1], &gain_args[0],
                          &gain_args[1], &scale_arg))
        return NULL;
    Py_buffer baked, signal;
    if (get_buffer(baked_obj, &baked, 1, "f", "baked") < 0) return NULL;
    if (get_buffer(signal_obj, &signal, 0, "f", "signal") < 0) {
        PyBuffer_Release(&baked);
        return NULL;
    }
    Py_ssize_t length = baked.len / 4 / 2, signal_len = signal.len / 4;
    for (int ear = 0; ear < 2; ear++) {
        if (bases[ear] < 0 || bases[ear] + length > signal_len) {
            PyErr_SetString(PyExc_ValueError, "bake: the sound is shorter than its baked copy");
            PyBuffer_Release(&signal);
            PyBuffer_Release(&baked);
            return NULL;
        }
    }
    float scale = (float)scale_arg;
    for (int ear = 0; ear < 2; ear++) {
        float gain = (float)gain_args[ear] * scale;
        float *o = (float *)baked.buf + ear * length;
        const float *s = (const float *)signal.buf + bases[ear];
        for (Py_ssize_t j = 0; j < length; j++) o[j] = s[j] * gain;
    }
    PyBuffer_Release(&signal);
    PyBuffer_Release(&baked);
    Py_RETURN_NONE;
}

/* levels(offset, flat, distance, cos, sin, table, gain_sqrt2, near, behind_slope, ahead, ild_exponent, exponent,
 *        level)
 *
 * spatial.numpy_levels, operation for operation: for each sound s and listener pose k, from the offset of
 * the sound (complex128, x + iy), its distance on the ground and in space, and the pose's heading, the
 * exponent of the ears' level ratio and the level (both float64, written to exponent and level, shaped
 * (sounds, poses)). table (sounds, 4): reference distance, height, quiet gain, fade-out distance. */
static PyObject *levels(PyObject *self, PyObject *args) {
    PyObject *objs[8];
    double gain_sqrt2, near, behind_slope, ahead, ild_exponent;
    if (!PyArg_ParseTuple(args, "OOOOOOdddddOO", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4], &objs[5],
                          &gain_sqrt2, &near, &behind_slope, &ahead, &ild_exponent, &objs[6], &objs[7]))
        return NULL;
    static const char *names[8] = {"offset", "flat", "distance", "cos", "sin", "table", "exponent", "level"};
    Py_buffer views[8];
    int got = 0;
    for (; got < 8; got++) {
        if (get_buffer(objs[got], &views[got], got >= 6, got == 0 ? "Zd" : "d", names[got]) < 0) break;
    }
    if (got < 8) {
        for (int i = 0; i < got; i++) PyBuffer_Release(&views[i]);
        return NULL;
    }
    Py_ssize_t poses = views[3].len / 8, cells = views[1].len / 8, sounds = poses > 0 ? cells / poses : 0;
    if (poses <= 0 || views[4].len != views[3].len || cells != sounds * poses || views[0].len != 2 * views[1].len
        || views[2].len != views[1].len || views[5].len / 8 != 4 * sounds || views[6].len != views[1].len
        || views[7].len != views[1].len) {
        PyErr_SetString(PyExc_ValueError, "levels: the arrays' sizes do not agree");
        for (int i = 0; i < 8; i++) PyBuffer_Release(&views[i]);
        return NULL;
    }
    const double *offset = views[0].buf, *flat = views[1].buf, *distance = views[2].buf, *cos = views[3].buf,
                 *sin = views[4].buf, *table = views[5].buf;
    double *exponent = views[6].buf, *level = views[7].buf;
    for (Py_ssize_t s = 0; s < sounds; s++) {
        double reference = table[4 * s], audible = table[4 * s + 3], scale = reference * gain_sqrt2;
        for (Py_ssize_t k = 0; k < poses; k++) {
            Py_ssize_t i = s * poses + k;
            double dx = offset[2 * i], dy = offset[2 * i + 1], d = distance[i];
            double inverse = 1.0 / (d >= near ? d : near);
            double lateral = (dx * cos[k] + dy * sin[k]) * inverse;
            double value = scale / (d >= reference ? d : reference);
            double fade = 1.0 - flat[i] / audible;
            value = value * (fade >= 0.0 ? fade : 0.0);
            value = value * ((dy * cos[k] - dx * sin[k]) * (inverse * behind_slope) + ahead);
            exponent[i] = lateral * ild_exponent;
            level[i] = value;
        }
    }
    for (int i = 0; i < 8; i++) PyBuffer_Release(&views[i]);
    Py_RETURN_NONE;
}

/* on_segment(places, row, poses, ax, ay, along_x, along_y, length_sq): spatial.on_segment, operation for
 * operation, written to places[row] (complex128, (sounds, poses)): the segment's nearest point to each pose's
 * (x, y), poses (poses, 4) float64. */
static PyObject *on_segment(PyObject *self, PyObject *args) {
    PyObject *places_obj, *poses_obj;
    Py_ssize_t row;
    double ax, ay, along_x, along_y, length_sq;
    if (!PyArg_ParseTuple(args, "OnOddddd", &places_obj, &row, &poses_obj, &ax, &ay, &along_x, &along_y,
                          &length_sq))
        return NULL;
    Py_buffer places, poses;
    if (get_buffer(places_obj, &places, 1, "Zd", "places") < 0) return NULL;
    if (get_buffer(poses_obj, &poses, 0, "d", "poses") < 0) {
        PyBuffer_Release(&places);
        return NULL;
    }
    Py_ssize_t knots = poses.len / 8 / 4;
    if (row < 0 || places.len / 16 < (row + 1) * knots || poses.len != knots * 4 * 8) {
        PyErr_SetString(PyExc_ValueError, "on_segment: the row does not fit the places or the poses");
        PyBuffer_Release(&poses);
        PyBuffer_Release(&places);
        return NULL;
    }
    const double *pose = poses.buf;
    double *out = (double *)places.buf + 2 * row * knots;
    for (Py_ssize_t k = 0; k < knots; k++) {
        double t = ((pose[4 * k] - ax) * along_x + (pose[4 * k + 1] - ay) * along_y) / length_sq;
        t = t >= 0.0 ? t : 0.0;
        t = t <= 1.0 ? t : 1.0;
        out[2 * k] = ax + t * along_x;
        out[2 * k + 1] = ay + t * along_y;
    }
    PyBuffer_Release(&poses);
    PyBuffer_Release(&places);
    Py_RETURN_NONE;
}

/* audibility(gains, quiet_column_table, still_listener, audible) -> (largest, heard_at_all, still)
 *
 * The mixer's numpy code, in one pass: a knot is heard where either ear's gain (float32) reaches the sound's
 * quiet gain (table[s, 2]); a tick is audible (written to audible (sounds, ticks) bool) where either of its
 * ends is heard. Returns each sound's largest gain, whether it is heard at any knot, and whether it is still
 * (the listener did not move and every tick is audible). */
static PyObject *audibility(PyObject *self, PyObject *args) {
    PyObject *gains_obj, *table_obj, *audible_obj;
    int still_listener;
    if (!PyArg_ParseTuple(args, "OOpO", &gains_obj, &table_obj, &still_listener, &audible_obj)) return NULL;
    Py_buffer gains, table, audible;
    if (get_buffer(gains_obj, &gains, 0, "f", "gains") < 0) return NULL;
    if (get_buffer(table_obj, &table, 0, "d", "table") < 0) {
        PyBuffer_Release(&gains);
        return NULL;
    }
    if (get_buffer(audible_obj, &audible, 1, "?", "audible") < 0) {
        PyBuffer_Release(&table);
        PyBuffer_Release(&gains);
        return NULL;
    }
    Py_ssize_t sounds = table.len / 8 / 4, ticks = sounds > 0 ? audible.len / sounds : 0, knots = ticks + 1;
    PyObject *largest = NULL, *heard_at_all = NULL, *still = NULL, *result = NULL;
    if (sounds <= 0 || ticks <= 0 || audible.len != sounds * ticks || gains.len / 4 != sounds * 2 * knots) {
        PyErr_SetString(PyExc_ValueError, "audibility: the arrays' sizes do not agree");
        goto done;
    }
    largest = PyList_New(sounds);
    heard_at_all = PyList_New(sounds);
    still = PyList_New(sounds);
    if (largest == NULL || heard_at_all == NULL || still == NULL) goto done;
    const float *g = gains.buf;
    const double *quiet_column = table.buf;
    char *aud = audible.buf;
    for (Py_ssize_t s = 0; s < sounds; s++) {
        const float *left = g + s * 2 * knots, *right = left + knots;
        double quiet = quiet_column[4 * s + 2];
        float top = left[0];
        int all_audible = 1, before = 0;
        for (Py_ssize_t k = 0; k < knots; k++) {
            float louder = left[k] >= right[k] ? left[k] : right[k];
            top = louder > top ? louder : top;
            int heard = (double)louder >= quiet;
            if (k > 0) {
                aud[s * ticks + k - 1] = (char)(before | heard);
                all_audible &= before | heard;
            }
            before = heard;
        }
        PyObject *value = PyFloat_FromDouble((double)top);
        if (value == NULL) goto done;
        PyList_SET_ITEM(largest, s, value);
        PyList_SET_ITEM(heard_at_all, s, Py_NewRef((double)top >= quiet ? Py_True : Py_False));
        PyList_SET_ITEM(still, s, Py_NewRef(still_listener && all_audible ? Py_True : Py_False));
    }
    result = PyTuple_Pack(3, largest, heard_at_all, still);
done:
    Py_XDECREF(largest);
    Py_XDECREF(heard_at_all);
    Py_XDECREF(still);
    PyBuffer_Release(&audible);
    PyBuffer_Release(&table);
    PyBuffer_Release(&gains);
    return result;
}

/* add(out, stride, a, b, baked, offset, write): out[e * stride + i] (+)= baked[e, offset + i] for i in [a, b),
 * baked (2, length): a brief sound, baked, mixed in. */
static PyObject *add(PyObject *self, PyObject *args) {
    PyObject *out_obj, *baked_obj;
    Py_ssize_t stride, a, b, offset;
    int write;
    if (!PyArg_ParseTuple(args, "OnnnOnp", &out_obj, &stride, &a, &b, &baked_obj, &offset, &write)) return NULL;
    Py_buffer out, baked;
    if (get_buffer(out_obj, &out, 1, "f", "out") < 0) return NULL;
    if (get_buffer(baked_obj, &baked, 0, "f", "baked") < 0) {
        PyBuffer_Release(&out);
        return NULL;
    }
    Py_ssize_t length = baked.len / 4 / 2;
    if (a < 0 || b < a || stride < b || out.len / 4 < stride + b || offset + a < 0 || offset + b > length) {
        PyErr_SetString(PyExc_ValueError, "add: the span does not fit the mix or the baked sound");
        PyBuffer_Release(&baked);
        PyBuffer_Release(&out);
        return NULL;
    }
    for (int ear = 0; ear < 2; ear++) {
        float *o = (float *)out.buf + ear * stride;
        const float *s = (const float *)baked.buf + ear * length + offset;
        if (write)
            memcpy(o + a, s + a, (size_t)(b - a) * sizeof(float));
        else
            for (Py_ssize_t i = a; i < b; i++) o[i] = o[i] + s[i];
    }
    PyBuffer_Release(&baked);
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

/* to_pcm(out, stride, size, clip, pcm): pcm (size, 2) int16 interleaved = out's two rows, clipped to the 16-bit
 * range when clip, cast toward zero (as numpy's astype). */
static PyObject *to_pcm(PyObject *self, PyObject *args) {
    PyObject *out_obj, *pcm_obj;
    Py_ssize_t stride, size;
    int clip;
    if (!PyArg_ParseTuple(args, "OnnpO", &out_obj, &stride, &size, &clip, &pcm_obj)) return NULL;
    Py_buffer out, pcm;
    if (get_buffer(out_obj, &out, 0, "f", "out") < 0) return NULL;
    if (get_buffer(pcm_obj, &pcm, 1, "h", "pcm") < 0) {
        PyBuffer_Release(&out);
        return NULL;
    }
    if (size < 0 || stride < size || out.len / 4 < stride + size || pcm.len / 2 < 2 * size) {
        PyErr_SetString(PyExc_ValueError, "to_pcm: the sizes do not fit");
        PyBuffer_Release(&pcm);
        PyBuffer_Release(&out);
        return NULL;
    }
    const float *left = (const float *)out.buf, *right = left + stride;
    int16_t *dest = (int16_t *)pcm.buf;
    if (clip) {
        for (Py_ssize_t i = 0; i < size; i++) {
            float l = left[i] < -32768.0f ? -32768.0f : (left[i] > 32767.0f ? 32767.0f : left[i]);
            float r = right[i] < -32768.0f ? -32768.0f : (right[i] > 32767.0f ? 32767.0f : right[i]);
            dest[2 * i] = (int16_t)l;
            dest[2 * i + 1] = (int16_t)r;
        }
    } else {
        for (Py_ssize_t i = 0; i < size; i++) {
            dest[2 * i] = (int16_t)left[i];
            dest[2 * i + 1] = (int16_t)right[i];
        }
    }
    PyBuffer_Release(&pcm);
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"weigh", weigh, METH_VARARGS, "Add one sound, weighted by its ears' gain ramps, to the mix."},
    {"bake", bake, METH_VARARGS, "A brief sound as each ear hears it, at a fixed gain."},
    {"levels", levels, METH_VARARGS, "The ears' level ratio exponent and level of every sound and pose."},
    {"on_segment", on_segment, METH_VARARGS, "A segment's nearest point to each listener pose."},
    {"audibility", audibility, METH_VARARGS, "Which ticks of each sound are heard, and its largest gain."},
    {"add", add, METH_VARARGS, "Add a baked sound to the mix."},
    {"to_pcm", to_pcm, METH_VARARGS, "The mix as interleaved int16 PCM."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_mixkernel", NULL, -1, methods};

PyMODINIT_FUNC PyInit__mixkernel(void) { return PyModule_Create(&module); }
