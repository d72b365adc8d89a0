# For each --pdl cubin: in the SASS of pipelink_kernel, every global load (LDG) and TMA load
# (UTMALDG) must come after the first griddepcontrol.wait (ACQBULK) in program order, counted
# per instruction address; reports the first of each.
for f in "$@"; do
  cuobjdump -sass "$f" > /tmp/s.txt
  awk -v F="$(basename $f)" '
    /ACQBULK/ && !w {w=NR; wa=$0}
    /(LDG|UTMALDG|LDGSTS|UBLKCP)/ && !l {l=NR; la=$0}
    END {printf "%s: first ACQBULK at line %d; first global/TMA load at line %d -> %s\n", F, w, l, (w && (!l || w < l)) ? "wait first" : "LOAD BEFORE WAIT"; print "   " wa; print "   " la}' /tmp/s.txt
  echo "   ACQBULK count: $(grep -c ACQBULK /tmp/s.txt), PREEXIT: $(grep -c PREEXIT /tmp/s.txt)"
done
