#!/usr/bin/env python3
"""A trial (issue 38): over which coordinates should `bo`'s Gaussian
process measure how alike two variants are? The configuration's fields
(what `bo` uses), the variant's features (the ranker's inputs, each
standardized within the kernel), or both. A small GP written here
(isotropic RBF, its lengthscale a factor of the median distance between
the kernel's variants, the ranker's calibrated score as the prior mean,
expected improvement), the ranker's leave-one-out scores as the prior,
replayed over the shipped tables; mean % of Opt at 6 and 12 runs.

Needs numpy, and the scores written by

    POLYTUNE_SCORES="/tmp/scores-{compiler}.json" POLYTUNE_SETTINGS=default \
      cargo test --release --test variant_rank ranker_settings -- --ignored --nocapture

then, from the project's root:

    python3 scripts/gp_coordinates_trial.py /tmp/scores-{compiler}.json

The figures are in docs/src/results/variant-model.md.
"""

import json
import math
import re
import sys

import numpy as np


def fields(c):
    f = {}
    if re.fullmatch(r'[01]{12}', c):
        fu = {'00':0,'01':1,'11':2}[c[0:2]]
        f['fuse']=fu
        for i,b in enumerate(c[2:5]): f[f't{i}']=5.0 if b=='1' else 0.0
        f['wave']=int(c[5]); f['omp']=int(c[6]); f['prevec']=int(c[7]); f['simd']=int(c[8])
        f['uj0']={'000':0,'001':1,'011':2,'111':3}[c[9:12]]; f['uj1']=0
        return f
    for part in c.split(','):
        k,v=part.split('=')
        if k=='fuse': f['fuse']={'no':0,'smart':1,'max':2}[v]
        elif k=='tile':
            for i,s in enumerate(v.split('x')): f[f't{i}']=math.log2(int(s))
        elif k=='uj':
            s=v.split('x'); f['uj0']=math.log2(int(s[0])); f['uj1']=math.log2(int(s[1])) if len(s)>1 else 0
        elif k=='rb':
            s=v.split('x'); f['mr']=math.log2(int(s[0])); f['nr']=math.log2(int(s[1]))
        else:
            try: f[k]=float(v)
            except ValueError: f[k+'='+v]=1.0
    return f

def run(comp, arm, design=4, bits=3, lf=1.0, budget=12, amp=1.0):
    t=json.load(open(f'models/{comp}/variants.json'))
    sc=np.array(json.load(open(SCORES.replace('{compiler}', comp))))
    rows=t['rows']
    X=np.array([r['x'] for r in rows]); y=np.log([r['speedup'] for r in rows])
    K=np.array([r['kernel'] for r in rows])
    F=[fields(r['config']) for r in rows]
    keys=sorted({k for f in F for k in f})
    C=np.array([[f.get(k,0.0) for k in keys] for f in F])
    kernels=sorted(set(K))
    sds={k:np.std(y[K==k]) for k in kernels}
    out6=[];out12=[]
    for k in kernels:
        idx=np.where(K==k)[0]; n=len(idx)
        yk=y[idx]; s=sc[idx]
        spread=np.mean([sds[o] for o in kernels if o!=k])
        z=(s-s.mean())/(s.std() or 1)
        m=z*spread
        Ck=C[idx]; Xk=X[idx]
        def norm(A):
            A=A-A.mean(0); sd=A.std(0); sd[sd==0]=1; return A/sd
        if arm=='fields': P=norm(Ck)
        elif arm=='features': P=norm(Xk)
        elif arm=='both': P=np.hstack([norm(Ck),norm(Xk)])
        D=((P[:,None,:]-P[None,:,:])**2).sum(-1)
        med=np.median(np.sqrt(D[np.triu_indices(n,1)])) if n>1 else 1.0
        ls=max(med*lf,1e-6)
        Kfull=np.exp(-D/(2*ls*ls))
        # design: top by score, >= bits differing config fields
        order=np.argsort(-s,kind='stable')
        picked=[]
        for v in order:
            if len(picked)>=design: break
            if all((Ck[v]!=Ck[w]).sum()>=bits for w in picked): picked.append(v)
        for v in order:
            if len(picked)>=design: break
            if v not in picked: picked.append(v)
        while len(picked)<min(budget,n):
            P_=np.array(picked)
            r=yk[P_]-m[P_]
            a2=amp*spread**2
            Kpp=a2*Kfull[np.ix_(P_,P_)]+1e-6*np.eye(len(P_))
            L=np.linalg.cholesky(Kpp)
            alpha=np.linalg.solve(L.T,np.linalg.solve(L,r))
            Kxp=a2*Kfull[:,P_]
            mu=m+Kxp@alpha
            vv=np.linalg.solve(L,Kxp.T)
            var=np.maximum(a2-(vv**2).sum(0),1e-12); sd=np.sqrt(var)
            best=max(yk[P_].max(),0.0)
            zz=(mu-best)/sd
            cdf=0.5*(1+np.vectorize(math.erf)(zz/np.sqrt(2))); pdf=np.exp(-zz*zz/2)/np.sqrt(2*np.pi)
            ei=(mu-best)*cdf+sd*pdf
            ei[P_]=-1
            picked.append(int(np.argmax(ei)))
        opt=max(yk.max(),0.0)
        share=lambda nn: math.exp(max(yk[np.array(picked[:nn])].max(),0.0)-opt)
        out6.append(share(6)); out12.append(share(12))
    return 100*np.mean(out6),100*np.mean(out12)

SCORES = '/tmp/scores-{compiler}.json'

if __name__=='__main__':
    if len(sys.argv) > 1:
        SCORES = sys.argv[1]
    for arm in ['fields', 'features', 'both']:
        for lf in [1.0, 1.5, 2.0]:
            for amp in [0.5, 1.0, 2.0]:
                for d in [3, 4]:
                    g = run('gcc', arm, lf=lf, amp=amp, design=d)
                    c = run('clang', arm, lf=lf, amp=amp, design=d)
                    print(f"{arm:9} lengthscale x{lf} amplitude x{amp} design {d}: "
                          f"gcc {g[0]:.1f} / {g[1]:.1f}, clang {c[0]:.1f} / {c[1]:.1f}")
