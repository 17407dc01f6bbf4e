package ml.juno.engine.quantize;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Eight groups at once: the Vector API versions of {@link QuantMath#makeQkx2Quants} and
 * {@link QuantMath#makeQxQuants} (rmse type 1) for the sub-blocks of one K-quant super-block. Lane {@code j}
 * runs exactly the scalar algorithm on group {@code j}: the same IEEE float operations in the same order (no
 * FMA), per-lane branches as masks, so the results equal the scalar reference bit for bit; the speed comes from
 * running eight independent dependency chains side by side.
 * <p>
 * Inputs are transposed: {@code xt[i*8 + j]} is value {@code i} of group {@code j}. Levels come back the same
 * way, as floats holding small integers.
 */
final class QuantLanes {
    static final VectorSpecies<Float> F = FloatVector.SPECIES_256;
    static final int LANES = 8;
    private static final float MAGIC = 12582912f;

    private QuantLanes() {
    }

    /**
     * {@link QuantMath#nearestInt} per lane, as a float: adding and removing 1.5·2^23 rounds to the nearest
     * integer (ties to even) exactly as the scalar bit trick does, and the subtraction is exact. Staying in float
     * lanes keeps every operation a plain float vector op.
     */
    static FloatVector nearestInt(FloatVector v) {
        return v.add(MAGIC).sub(MAGIC);
    }

    static FloatVector clamp(FloatVector v, float lo, float hi) {
        return v.max(lo).min(hi);
    }

    /**
     * {@code make_qkx2_quants} on eight groups of {@code n}: levels into {@code lt}, scales into
     * {@code scales[so..so+8)}, mins (positive, as {@code the_min}) into {@code mins[so..so+8)}; {@code auxT} is
     * scratch of the same size as {@code xt}.
     */
    static void qkx2(int n, int nmax, float[] xt, float[] wt, float[] lt, float[] auxT, float[] scales, float[] mins,
                     int so, float rmin, float rdelta, int nstep, boolean useMad) {
        FloatVector x0 = FloatVector.fromArray(F, xt, 0);
        FloatVector min = x0;
        FloatVector max = x0;
        FloatVector sumW = FloatVector.fromArray(F, wt, 0);
        FloatVector sumX = sumW.mul(x0);
        for (int i = 1; i < n; i++) {
            FloatVector xi = FloatVector.fromArray(F, xt, i * LANES);
            min = min.blend(xi, xi.compare(VectorOperators.LT, min));
            max = max.blend(xi, xi.compare(VectorOperators.GT, max));
            FloatVector w = FloatVector.fromArray(F, wt, i * LANES);
            sumW = sumW.add(w);
            sumX = sumX.add(w.mul(xi));
        }
        FloatVector zero = FloatVector.zero(F);
        min = min.blend(zero, min.compare(VectorOperators.GT, 0f));
        VectorMask<Float> flat = max.compare(VectorOperators.EQ, min);
        FloatVector nmaxV = FloatVector.broadcast(F, (float) nmax);
        FloatVector range = max.sub(min);
        FloatVector iscale = nmaxV.div(range);
        FloatVector scale = FloatVector.broadcast(F, 1f).div(iscale);
        FloatVector bestError = zero;
        for (int i = 0; i < n; i++) {
            FloatVector xi = FloatVector.fromArray(F, xt, i * LANES);
            FloatVector lf = clamp(nearestInt(iscale.mul(xi.sub(min))), 0f, nmax);
            lf.intoArray(lt, i * LANES);
            FloatVector diff = scale.mul(lf).add(min).sub(xi);
            diff = useMad ? diff.abs() : diff.mul(diff);
            bestError = bestError.add(FloatVector.fromArray(F, wt, i * LANES).mul(diff));
        }
        if (nstep >= 1) {
            for (int is = 0; is <= nstep; is++) {
                iscale = FloatVector.broadcast(F, rmin + rdelta * is + nmax).div(max.sub(min));
                FloatVector sumL = zero;
                FloatVector sumL2 = zero;
                FloatVector sumXl = zero;
                for (int i = 0; i < n; i++) {
                    FloatVector xi = FloatVector.fromArray(F, xt, i * LANES);
                    FloatVector lf = clamp(nearestInt(iscale.mul(xi.sub(min))), 0f, nmax);
                    lf.intoArray(auxT, i * LANES);
                    FloatVector wl = FloatVector.fromArray(F, wt, i * LANES).mul(lf);
                    sumL = sumL.add(wl);
                    sumL2 = sumL2.add(wl.mul(lf));
                    sumXl = sumXl.add(wl.mul(xi));
                }
                FloatVector d = sumW.mul(sumL2).sub(sumL.mul(sumL));
                VectorMask<Float> positive = d.compare(VectorOperators.GT, 0f).andNot(flat);
                if (!positive.anyTrue()) {
                    continue;
                }
                FloatVector thisScale = sumW.mul(sumXl).sub(sumX.mul(sumL)).div(d);
                FloatVector thisMin = sumL2.mul(sumX).sub(sumL.mul(sumXl)).div(d);
                VectorMask<Float> minPositive = thisMin.compare(VectorOperators.GT, 0f);
                thisMin = thisMin.blend(zero, minPositive);
                thisScale = thisScale.blend(sumXl.div(sumL2), minPositive);
                FloatVector curError = zero;
                for (int i = 0; i < n; i++) {
                    FloatVector xi = FloatVector.fromArray(F, xt, i * LANES);
                    FloatVector diff = thisScale.mul(FloatVector.fromArray(F, auxT, i * LANES)).add(thisMin).sub(xi);
                    diff = useMad ? diff.abs() : diff.mul(diff);
                    curError = curError.add(FloatVector.fromArray(F, wt, i * LANES).mul(diff));
                }
                VectorMask<Float> better = positive.and(curError.compare(VectorOperators.LT, bestError));
                if (better.anyTrue()) {
                    for (int i = 0; i < n; i++) {
                        FloatVector.fromArray(F, lt, i * LANES)
                                .blend(FloatVector.fromArray(F, auxT, i * LANES), better)
                                .intoArray(lt, i * LANES);
                    }
                    bestError = bestError.blend(curError, better);
                    scale = scale.blend(thisScale, better);
                    min = min.blend(thisMin, better);
                }
            }
        }
        if (flat.anyTrue()) {
            for (int i = 0; i < n; i++) {
                FloatVector.fromArray(F, lt, i * LANES).blend(zero, flat).intoArray(lt, i * LANES);
            }
            scale = scale.blend(zero, flat);
        }
        scale.intoArray(scales, so);
        min.neg().intoArray(mins, so);
    }

    /**
     * {@code make_qx_quants(n, nmax, x, L, 1, NULL)} on eight groups of {@code n}: levels biased by nmax into
     * {@code lt}, scales into {@code scales[so..so+8)}.
     */
    static void qx(int n, int nmax, float[] xt, float[] lt, float[] scales, int so) {
        FloatVector zero = FloatVector.zero(F);
        FloatVector max = zero;
        FloatVector amax = zero;
        for (int i = 0; i < n; i++) {
            FloatVector xi = FloatVector.fromArray(F, xt, i * LANES);
            FloatVector ax = xi.abs();
            VectorMask<Float> bigger = ax.compare(VectorOperators.GT, amax);
            amax = amax.blend(ax, bigger);
            max = max.blend(xi, bigger);
        }
        VectorMask<Float> tiny = amax.compare(VectorOperators.LT, QuantMath.GROUP_MAX_EPS);
        FloatVector iscale = FloatVector.broadcast(F, (float) -nmax).div(max);
        FloatVector sumlx = zero;
        FloatVector suml2 = zero;
        for (int i = 0; i < n; i++) {
            FloatVector xi = FloatVector.fromArray(F, xt, i * LANES);
            FloatVector lf = clamp(nearestInt(iscale.mul(xi)), -nmax, nmax - 1);
            lf.add(nmax).intoArray(lt, i * LANES);
            FloatVector w = xi.mul(xi);
            sumlx = sumlx.add(w.mul(xi).mul(lf));
            suml2 = suml2.add(w.mul(lf).mul(lf));
        }
        FloatVector scale = sumlx.div(suml2).blend(zero, suml2.compare(VectorOperators.EQ, 0f));
        FloatVector best = scale.mul(sumlx);
        for (int is = -9; is <= 9; ++is) {
            if (is == 0) {
                continue;
            }
            iscale = FloatVector.broadcast(F, -(nmax + 0.1f * is)).div(max);
            sumlx = zero;
            suml2 = zero;
            for (int i = 0; i < n; i++) {
                FloatVector xi = FloatVector.fromArray(F, xt, i * LANES);
                FloatVector lf = clamp(nearestInt(iscale.mul(xi)), -nmax, nmax - 1);
                FloatVector w = xi.mul(xi);
                sumlx = sumlx.add(w.mul(xi).mul(lf));
                suml2 = suml2.add(w.mul(lf).mul(lf));
            }
            VectorMask<Float> better = suml2.compare(VectorOperators.GT, 0f)
                    .and(sumlx.mul(sumlx).compare(VectorOperators.GT, best.mul(suml2)));
            if (better.anyTrue()) {
                for (int i = 0; i < n; i++) {
                    FloatVector xi = FloatVector.fromArray(F, xt, i * LANES);
                    FloatVector lf = clamp(nearestInt(iscale.mul(xi)), -nmax, nmax - 1).add(nmax);
                    FloatVector.fromArray(F, lt, i * LANES).blend(lf, better).intoArray(lt, i * LANES);
                }
                FloatVector s = sumlx.div(suml2);
                scale = scale.blend(s, better);
                best = best.blend(s.mul(sumlx), better);
            }
        }
        if (tiny.anyTrue()) {
            for (int i = 0; i < n; i++) {
                FloatVector.fromArray(F, lt, i * LANES).blend(zero, tiny).intoArray(lt, i * LANES);
            }
            scale = scale.blend(zero, tiny);
        }
        scale.intoArray(scales, so);
    }

    /** Largest magnitude {@link QuantMath#nearestInt} rounds correctly; beyond it the scalar trick gives garbage. */
    private static final float NEAREST_INT_LIMIT = 4194303f;

    /**
     * {@code make_q3_quants(n, nmax, x, L, true)} on eight groups of {@code n}: levels biased by nmax into
     * {@code lt}, scales into {@code scales[so..so+8)}. Returns {@code false} (and the caller must use the scalar
     * reference for these groups) if some lane would round a value beyond ±2^22, where ggml's
     * {@code nearest_int} returns an artefact of its bit trick that these float lanes do not reproduce.
     */
    static boolean q3(int n, int nmax, float[] xt, float[] lt, float[] scales, int so) {
        FloatVector zero = FloatVector.zero(F);
        FloatVector max = zero;
        FloatVector amax = zero;
        for (int i = 0; i < n; i++) {
            FloatVector xi = FloatVector.fromArray(F, xt, i * LANES);
            FloatVector ax = xi.abs();
            VectorMask<Float> bigger = ax.compare(VectorOperators.GT, amax);
            amax = amax.blend(ax, bigger);
            max = max.blend(xi, bigger);
        }
        VectorMask<Float> tiny = amax.compare(VectorOperators.LT, QuantMath.GROUP_MAX_EPS);
        VectorMask<Float> live = tiny.not();
        FloatVector iscale = FloatVector.broadcast(F, (float) -nmax).div(max);
        FloatVector sumlx = zero;
        FloatVector suml2 = zero;
        for (int i = 0; i < n; i++) {
            FloatVector xi = FloatVector.fromArray(F, xt, i * LANES);
            FloatVector v = iscale.mul(xi);
            if (v.abs().compare(VectorOperators.GT, NEAREST_INT_LIMIT).and(live).anyTrue()) {
                return false;
            }
            FloatVector lf = clamp(nearestInt(v), -nmax, nmax - 1);
            lf.intoArray(lt, i * LANES);
            FloatVector w = xi.mul(xi);
            sumlx = sumlx.add(w.mul(xi).mul(lf));
            suml2 = suml2.add(w.mul(lf).mul(lf));
        }
        VectorMask<Float> active = live;
        for (int itry = 0; itry < 5 && active.anyTrue(); ++itry) {
            VectorMask<Float> changed = F.maskAll(false);
            for (int i = 0; i < n; i++) {
                FloatVector xi = FloatVector.fromArray(F, xt, i * LANES);
                FloatVector li = FloatVector.fromArray(F, lt, i * LANES);
                FloatVector w = xi.mul(xi);
                FloatVector wx = w.mul(xi);
                FloatVector slx = sumlx.sub(wx.mul(li));
                VectorMask<Float> go = active.and(slx.compare(VectorOperators.GT, 0f));
                if (!go.anyTrue()) {
                    continue;
                }
                FloatVector sl2 = suml2.sub(w.mul(li).mul(li));
                FloatVector v = xi.mul(sl2).div(slx);
                if (v.abs().compare(VectorOperators.GT, NEAREST_INT_LIMIT).and(go).anyTrue()) {
                    return false;
                }
                FloatVector newL = clamp(nearestInt(v), -nmax, nmax - 1);
                go = go.and(newL.compare(VectorOperators.NE, li));
                slx = slx.add(wx.mul(newL));
                sl2 = sl2.add(w.mul(newL).mul(newL));
                go = go.and(sl2.compare(VectorOperators.GT, 0f))
                        .and(slx.mul(slx).mul(suml2).compare(VectorOperators.GT, sumlx.mul(sumlx).mul(sl2)));
                if (go.anyTrue()) {
                    li.blend(newL, go).intoArray(lt, i * LANES);
                    sumlx = sumlx.blend(slx, go);
                    suml2 = suml2.blend(sl2, go);
                    changed = changed.or(go);
                }
            }
            active = active.and(changed);
        }
        for (int i = 0; i < n; i++) {
            FloatVector.fromArray(F, lt, i * LANES).add(nmax).blend(zero, tiny).intoArray(lt, i * LANES);
        }
        FloatVector scale = sumlx.div(suml2).blend(zero, suml2.compare(VectorOperators.GT, 0f).not());
        scale.blend(zero, tiny).intoArray(scales, so);
        return true;
    }
}
