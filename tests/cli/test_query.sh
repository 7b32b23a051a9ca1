#!/bin/bash
# test_query.sh - DataJoint's query algebra on the command line (issue 39):
# `djc fetch EXPR` (join, restriction by JSON and by another expression,
# anti-restriction, proj, aggr, parentheses) with --format table|csv|tsv|
# json|jsonl, --attrs, --order-by, --limit, --offset, --fetch1, --explain
# (one statement, placeholders, nothing run); `djc delete EXPR`; bad input
# (unknown attributes and tables, incompatible joins, syntax) is one line on
# stderr, exit 2, nothing printed or changed.
. "$ROOT/tests/cli/lib.sh"

cat > p.djc <<'P'
Subject (manual)
    subject : varchar(16)
    ---
    species : varchar(16)
    weight : float64

Session (manual)
    -> Subject
    session : int32
    ---
    note : varchar(32)

Memo (manual)
    subject : varchar(16)
    memo : int32
    ---
    note : varchar(32)

Trial (manual)
    -> Session
    trial : int32
    ---
    duration : float64

Stats (manual)
    -> Session
    ---
    n_trials : int32
P
djc declare p.djc >/dev/null
printf '%s\n' '{"subject":"m1","species":"mouse","weight":20}' '{"subject":"m2","species":"mouse","weight":22}' \
	'{"subject":"r1","species":"rat","weight":300}' | djc insert Subject >/dev/null
printf '%s\n' '{"subject":"m1","session":1,"note":"a"}' '{"subject":"m1","session":2,"note":"b"}' \
	'{"subject":"m2","session":1,"note":"c"}' '{"subject":"r1","session":1,"note":"d"}' | djc insert Session >/dev/null
printf '%s\n' '{"subject":"m1","session":1,"trial":1,"duration":1}' '{"subject":"m1","session":1,"trial":2,"duration":2}' \
	'{"subject":"m1","session":2,"trial":1,"duration":6}' '{"subject":"r1","session":1,"trial":1,"duration":8}' |
	djc insert Trial >/dev/null
printf '%s\n' '{"subject":"m1","session":1,"n_trials":2}' '{"subject":"m1","session":2,"n_trials":1}' \
	'{"subject":"r1","session":1,"n_trials":1}' | djc insert Stats >/dev/null
printf '%s\n' '{"subject":"m1","memo":1,"note":"x"}' | djc insert Memo >/dev/null

case_join() {
expect_out "a join restricted by a JSON condition" "subject,session,note,n_trials
m1,1,a,2
m1,2,b,1" djc fetch 'Session * Stats & {"subject": "m1"}' --format csv
expect_out "a join restricted by a parent's attribute (semijoin)" "subject,session,note,n_trials
m1,1,a,2
m1,2,b,1" djc fetch 'Session * Stats & (Subject & {"species": "mouse"})' --format csv
expect_out "the parent's attributes joined in" "subject,session,species,note,n_trials
r1,1,rat,d,1" djc fetch 'Subject * Session * Stats & {"species": "rat"}' --format csv --attrs subject,session,species,note,n_trials
expect_out "anti-restriction by an expression" "subject,session,note
m2,1,c" djc fetch 'Session - Stats' --format csv
expect_out "anti-restriction by JSON: NOT (a AND b)" "subject,session
m1,2
m2,1
r1,1" djc fetch 'Session.proj() - {"subject": "m1", "session": 1}' --format csv
expect_out "parentheses and precedence: A - B & C is (A - B) & C" "subject,session,note
m2,1,c" djc fetch '(Session - Stats) & Subject' --format csv
}
tcase join

case_text() {
expect_out "condition text across a join, values bound" "subject,session,note,n_trials
m1,1,a,2" djc fetch "Session * Stats & 'subject = \"m1\" and n_trials > 1'" --format csv
run djc fetch "Session * Stats & 'subject = \"m1\" and n_trials > 1'" --explain
check "--explain of condition text: placeholders, no values" eval 'printf "%s" "$OUT" | grep -q "= ? AND .* > ?" && ! printf "%s" "$OUT" | grep -q m1'
expect_out "anti-restriction by condition text" "subject,session
m1,1
m1,2
r1,1" djc fetch "(Session - 'note = \"c\"').proj()" --format csv
expect_fail 2 "condition text names what the expression has" '"note" is not an attribute of Session.proj\(\) \(the valid names: subject, session\)' \
	djc fetch "Session.proj() - 'note = \"c\"'"
expect_fail 2 "a condition's SQL is refused, naming its column" "condition, column 9: ';' is not part of a condition" \
	djc fetch "Session & 'note = 1; drop table session'"
expect_fail 2 "a '1=1 or' trick is refused" "compares two values" djc fetch "Session & '1=1 or note = 1'"
expect_fail 2 "an unknown attribute in condition text" '"nte" is not an attribute of Session \(did you mean note\?' djc fetch "Session & 'nte = 1'"
}
tcase text

case_proj_aggr() {
expect_out "proj renames and keeps the key" "subject,session,label
m1,1,a
m1,2,b
m2,1,c
r1,1,d" djc fetch 'Session.proj(label=note)' --format csv
expect_out "proj(..., new=old): every attribute, old renamed (DataJoint drops old)" "subject,kind,weight
m1,mouse,20
m2,mouse,22
r1,rat,300" djc fetch 'Subject.proj(..., kind=species)' --format csv
expect_out "proj(old, ..., new=old): old named too stays" "subject,species,kind,weight
m1,mouse,mouse,20
m2,mouse,mouse,22
r1,rat,rat,300" djc fetch 'Subject.proj(species, ..., kind=species)' --format csv
expect_out "proj(..., -a, -b): every attribute but those (DataJoint 2's exclusion)" "subject,weight
m1,20
m2,22
r1,300" djc fetch 'Subject.proj(..., -species)' --format csv
expect_out "... without ...: the key; named and excluded: left out" "subject
m1
m2
r1" djc fetch 'Subject.proj(weight, -species, -weight)' --format csv
expect_out "... an excluded attribute can still be renamed" "subject,kind,weight
m1,mouse,20
m2,mouse,22
r1,rat,300" djc fetch 'Subject.proj(..., -species, kind=species)' --format csv
expect_out "... in an aggregation's kept attributes" "subject,weight,n
m1,20,3
m2,22,0
r1,300,1" djc fetch 'Subject.aggr(Trial, ..., -species, n=count())' --format csv
expect_fail 2 "a key attribute cannot be excluded (DataJoint neither)" "^djc: proj: cannot exclude primary key attribute 'subject' of Subject" \
	djc fetch 'Subject.proj(..., -subject)'
expect_fail 2 "... nor in an aggregation" "^djc: aggr: cannot exclude primary key attribute 'subject' of Subject" \
	djc fetch 'Subject.aggr(Trial, -subject, n=count())'
expect_fail 2 "excluding an unknown name is an error (DataJoint ignores it)" 'proj: an exclusion names "speces", which is not an attribute of Subject \(did you mean species\?' \
	djc fetch 'Subject.proj(..., -speces)'
expect_out "an aggregation per subject (every subject, 0 without trials)" "subject,n,total
m1,3,9
m2,0,
r1,1,8" djc fetch 'Subject.aggr(Trial, n=count(), total=sum(duration))' --format csv
expect_out "count(distinct X): X's values, each once (0 without rows)" "subject,s,t,d
m1,2,2,3
m2,0,0,0
r1,1,1,1" djc fetch 'Subject.aggr(Trial, s=count(distinct session), t=count(DISTINCT trial), d=count(distinct duration))' --format csv
expect_out "count(distinct(X)), as SQL writes it too" "subject,s
m1,2
m2,0
r1,1" djc fetch 'Subject.aggr(Trial, s=count(distinct( session )))' --format csv
expect_out "... by U, restricted on it" "species,n
mouse,1" djc fetch 'U(species).aggr(Subject * Trial, n=count(distinct subject)) & "n < 2 and species = \"mouse\""' --format csv
expect_fail 2 "count(distinct) of rows" "^djc: aggr: count\(distinct X\) needs an attribute of Trial$" \
	djc fetch 'Subject.aggr(Trial, n=count(distinct *))'
expect_fail 2 "count(distinct) of two attributes" "^djc: aggr: count\(distinct X\) counts one attribute \('n=count\(distinct session, trial\)'\)$" \
	djc fetch 'Subject.aggr(Trial, n=count(distinct session, trial))'
expect_fail 2 "count(distinct) of an unknown attribute" '^djc: aggr names "sesion", which is not an attribute of Trial \(did you mean session\?' \
	djc fetch 'Subject.aggr(Trial, n=count(distinct sesion))'
expect_out "an aggregation restricted on its computed attribute" "subject,species,n
m1,mouse,3" djc fetch 'Subject.aggr(Trial, species, n=count()) & {"n": {">": 1}}' --format csv
expect_out "U(subject).aggr: one row per value" "subject,n,total
m1,2,3
r1,1,1" djc fetch 'U(subject).aggr(Session * Stats, n=count(), total=sum(n_trials))' --format csv
expect_out "union: the outer union of two projections" "subject,session,n_trials,note
m1,1,2,a
m1,2,1,b
m2,1,,c
r1,1,1,d" djc fetch 'Stats.proj(n_trials) + Session.proj(note)' --format csv
expect_fail 2 "union of operands sharing a secondary attribute" "union: Stats and Stats share the secondary attribute 'n_trials'" djc fetch 'Stats + Stats'
expect_out "an aggregation joined with its group's parent" "subject,session,note,m
m1,1,a,2
m1,2,b,6
m2,1,c,
r1,1,d,8" djc fetch 'Session.aggr(Trial, m=max(duration)) * Session' --format csv --attrs subject,session,note,m
}
tcase proj_aggr

case_formats() {
expect_out "--format table: aligned, key starred, a row count" "*subject  *session  note
--------  --------  ----
m2        1         c
(1 row)" djc fetch 'Session - Stats'
expect_out "--format tsv, NULL as \\N" "subject	n	total
m2	0	\\N" djc fetch 'Subject.aggr(Trial, n=count(), total=sum(duration)) & {"subject": "m2"}' --format tsv
expect_out "--format jsonl" '{"subject":"m2","session":1,"note":"c"}' djc fetch 'Session - Stats' --format jsonl
expect_out "--format json is JSON Lines too" '{"subject":"m2","session":1,"note":"c"}' djc fetch 'Session - Stats' --format json
expect_out "--attrs --order-by --limit --offset" "note,session
c,1
b,2" djc fetch Session --attrs note,session --order-by 'note desc, session' --limit 2 --offset 1 --format csv
expect_out "--order-by KEY DESC --limit" "subject,session
r1,1" djc fetch 'Session.proj()' --order-by 'KEY desc' --limit 1 --format csv
expect_out "--offset alone" "subject
r1" djc fetch Subject --attrs subject --offset 2 --format csv
expect_out "a plain table with --where prints as before" "subject,session,note
m1,2,b" djc fetch Session --where '{"session": 2}' --format csv
}
tcase formats

case_fetch1() {
expect_out "--fetch1: exactly one row" '{"subject":"m2","session":1,"note":"c"}' djc fetch 'Session - Stats' --fetch1 --format json
expect_fail 2 "--fetch1 of two rows" 'fetch1: Session & \{"subject": "m1"\} has more than one row, not exactly one' \
	djc fetch 'Session & {"subject": "m1"}' --fetch1
[ -z "$OUT" ]; check "--fetch1 of two rows prints no row" [ -z "$OUT" ]
expect_fail 2 "--fetch1 of none" 'has no rows, not exactly one' djc fetch 'Session & {"subject": "zz"}' --fetch1
}
tcase fetch1

case_explain() {
run djc fetch 'Session * Stats & {"subject": "m1"} & (Subject & {"species": "mouse"})' --explain
check "--explain prints one statement" [ "$RC" = 0 ] && [ "$(printf '%s\n' "$OUT" | grep -c .)" = 1 ]
check "--explain: a SELECT with the values as placeholders" eval 'printf "%s" "$OUT" | grep -Eq "^SELECT .* WHERE .*= \? AND EXISTS \(SELECT 1 FROM .*= \?" && ! printf "%s" "$OUT" | grep -q m1'
run djc fetch 'Subject.aggr(Trial, n=count())' --explain --limit 2
check "--explain of an aggregation: GROUP BY, LEFT JOIN, LIMIT" eval 'printf "%s" "$OUT" | grep -Eq "LEFT JOIN .* GROUP BY .* LIMIT 2$"'
# nothing runs: a --fetch1 of two rows would fail if it did
run djc fetch 'Session & {"subject": "m1"}' --fetch1 --explain
check "--explain runs nothing (a --fetch1 that would fail explains)" eval '[ "$RC" = 0 ] && printf "%s" "$OUT" | grep -Eq "^SELECT .* LIMIT 2$"'
}
tcase explain

case_bad_input() {
expect_fail 2 "an unknown attribute names the valid ones" 'proj names "notes", which is not an attribute of Session \(did you mean note\? its attributes: subject, session, note\)' \
	djc fetch 'Session.proj(notes)'
[ -z "$OUT" ]; check "nothing printed for a bad expression" [ -z "$OUT" ]
expect_fail 2 "an unknown attribute in a restriction" 'restriction names "speces", which is not an attribute of Subject \(did you mean species\?' \
	djc fetch 'Subject & {"speces": "rat"}'
expect_fail 2 "an incompatible join: namesakes of different origin" "cannot join Session and Memo on attribute 'subject': it comes from Subject.subject in one and from Memo.subject" \
	djc fetch 'Session * Memo'
expect_fail 2 "a join on a shared plain secondary attribute" "cannot join .* on attribute 'note': it is not a key attribute or one inherited" \
	djc fetch 'Session * Memo.proj(m=subject, note)'
expect_fail 2 "an unknown table: did you mean" 'unknown table "Sesion" \(did you mean Session\?' djc fetch 'Sesion * Stats'
expect_fail 2 "a syntax error names its column" "expression: expected a table name or '\(' at column 11" djc fetch 'Session * '
expect_fail 2 "unbalanced parentheses" "expected '\)' at column" djc fetch '(Session * Stats'
expect_fail 2 "an unknown --order-by attribute" 'order by names "nope"' djc fetch Session --order-by 'nope desc'
expect_fail 2 "a bad direction" "'sideways' after 'note' is not asc or desc" djc fetch Session --order-by 'note sideways'
expect_fail 2 "an unknown --attrs attribute" 'attributes names "x"' djc fetch 'Session - Stats' --attrs subject,x
expect_fail 2 "--limit must be a number" '--limit takes a whole number >= 0' djc fetch Session --limit -3
expect_fail 2 "an aggregation whose group lacks the key" "aggr: the group Subject must have every primary key attribute of Session; it has no 'session'" \
	djc fetch 'Session.aggr(Subject, n=count())'
expect_fail 2 "an unknown aggregate function" "'x=median\(duration\)' is not one of count\(\)" djc fetch 'Session.aggr(Trial, x=median(duration))'
# arithmetic of aggregates (DataJoint's r='max(x) - min(x)'): refused as
# such, not as an attribute named "duration) - min(duration" (before
# December 2026)
expect_fail 2 "arithmetic of two aggregates" "^djc: aggr: 'r=max\(duration\) - min\(duration\)' is not one of count\(\) .*\(one function of one attribute: no arithmetic, no nested calls\)$" \
	djc fetch 'Session.aggr(Trial, r=max(duration) - min(duration))'
expect_fail 2 "arithmetic inside an aggregate" "^djc: aggr: 'r=sum\(duration \* 2\)' is not one of count\(\)" \
	djc fetch 'Session.aggr(Trial, r=sum(duration * 2))'
expect_fail 2 "SQL after an expression is not accepted" 'expression: unexpected text at column 17' djc fetch 'Session * Stats ; drop table session'
expect_out "the data is unchanged" "4" eval "djc fetch Session --format json | grep -c ."
}
tcase bad_input

case_delete() {
expect_out "delete EXPR --dry-run counts what cascades" "would delete 1 row from Stats
would delete 1 row from Trial
would delete 1 row from Session" djc delete 'Session & (Subject & {"species": "rat"})' --dry-run
expect_fail 2 "delete of a join is refused" 'delete: Session \* Stats is not rows of one table' djc delete 'Session * Stats' --yes
expect_out "delete EXPR" "deleted 1 row from Session" djc delete 'Session - Stats' --yes
expect_out "the other sessions stay" "subject,session
m1,1
m1,2
r1,1" djc fetch 'Session.proj()' --format csv
}
tcase delete proj_aggr formats fetch1 explain bad_input join

# A second reference to one parent, renamed (DataJoint's -> P.proj(c='p')):
# c has P.p's lineage, followed back through P's references (DataJoint's
# ~lineage row of c is the origin's), primary or secondary, so joins and
# restrictions by the parent renamed the same way are accepted; namesakes
# of different origin (two renamed references to different parents) are
# still refused.
case_renamed_ref() {
cat > r.djc <<'P'
Animal (manual)
    animal : varchar(16)
    ---
    aname : varchar(16)

Box (manual)
    box : int32
    ---

Rec (manual)
    -> Animal
    rec : int32
    ---

Pair (manual)
    -> Animal
    -> Animal.proj(other='animal')
    ---
    score : int32

RecPair (manual)
    -> Rec
    -> Rec.proj(other_animal='animal', other_rec='rec')
    ---

Cage (manual)
    cage : int32
    ---
    -> Box.proj(other='box')
    -> Animal.proj(buddy='animal')

PairStats (computed)
    -> Pair
    ---
    n : int32
P
djc declare r.djc >/dev/null
printf '%s\n' '{"animal":"a","aname":"Al"}' '{"animal":"b","aname":"Bo"}' '{"animal":"c","aname":"Cy"}' | djc insert Animal >/dev/null
printf '%s\n' '{"box":1}' | djc insert Box >/dev/null
printf '%s\n' '{"animal":"a","rec":1}' '{"animal":"b","rec":1}' '{"animal":"b","rec":2}' | djc insert Rec >/dev/null
printf '%s\n' '{"animal":"a","other":"b","score":1}' '{"animal":"b","other":"c","score":2}' | djc insert Pair >/dev/null
printf '%s\n' '{"animal":"a","rec":1,"other_animal":"b","other_rec":2}' | djc insert RecPair >/dev/null
printf '%s\n' '{"cage":1,"other":1,"buddy":"c"}' | djc insert Cage >/dev/null
expect_out "join on a renamed reference's attribute" "animal,other,score,oname
a,b,1,Bo
b,c,2,Cy" djc fetch 'Pair * Animal.proj(other=animal, oname=aname)' --format csv
expect_out "restriction by the parent renamed the same way" "animal,other
b,c" djc fetch 'Pair.proj() & (Animal & {"aname": "Cy"}).proj(other=animal)' --format csv
expect_out "anti-restriction by it" "animal,other
a,b" djc fetch 'Pair.proj() - (Animal & {"aname": "Cy"}).proj(other=animal)' --format csv
expect_out "a renamed two-attribute reference, through the parent's own reference" "animal,rec,other_animal,other_rec
a,1,b,2" djc fetch 'RecPair * Rec.proj(other_animal=animal, other_rec=rec)' --format csv
expect_out "... and anti-restricted by it" "0" sh -c '"$DJC" fetch "RecPair - Rec.proj(other_animal=animal, other_rec=rec)" --format jsonl | wc -l'
expect_out "a secondary renamed reference" "cage,other,buddy,aname
1,1,c,Cy" djc fetch 'Cage * Animal.proj(buddy=animal, aname)' --format csv
expect_out "two renamed references to one parent meet" "animal,buddy,score,cage
b,c,2,1" djc fetch 'Pair.proj(score, buddy=other) * Cage.proj(buddy)' --format csv --attrs animal,buddy,score,cage
expect_fail 2 "namesakes from different parents are still refused" "cannot join Pair and Cage on attribute 'other': it comes from Animal.animal in one and from Box.box in the other" \
	djc fetch 'Pair * Cage'
expect_fail 2 "... also renamed alike" "cannot join .* on attribute 'o': it comes from Animal.animal in one and from Box.box in the other" \
	djc fetch 'Pair.proj(o=other) * Cage.proj(o=other)'
expect_fail 2 "... and the renamed attribute against the parent's own name" "on attribute 'animal'" \
	djc fetch 'Cage.proj(animal=other) * Animal'
expect_out "an expression as --where: a key from a renamed reference" "PairStats: Completed 0 of 1" \
	sh -c '"$DJC" progress PairStats --where "(Animal & {\"aname\": \"Cy\"}).proj(other=animal)" | sed "s/ (.*//"'
}
tcase renamed_ref

# dj.U(a) & B: the distinct values of a in B
case_u_semi() {
expect_out "U(species) & Subject" "species
mouse
rat" djc fetch 'U(species) & Subject' --format csv
expect_out "U(subject) & (Stats & condition)" "subject
m1" djc fetch 'U(subject) & (Stats & "n_trials > 1")' --format csv
expect_out "... as a restriction" "subject,species
m1,mouse
r1,rat" djc fetch 'Subject & (U(subject) & Stats)' --attrs subject,species --format csv
expect_fail 2 "U(a) alone is refused" "^djc: expression: expected .aggr\( or & after U\(...\) at column 11" djc fetch 'U(species)'
}
tcase u_semi

# DataJoint's Python quotes in calls, as a user copies them: 'x', new='old',
# '-x', '...', n='count(*)', dj.U('a'), dj.Top(N, 'x desc') (before
# December 2026 the quotes stayed in the names: "a rename names "'note'"")
case_dj_quotes() {
expect_out "proj(label='note')" "subject,session,label
m1,1,a
m1,2,b" djc fetch "Session.proj(label='note') & {\"subject\": \"m1\"}" --format csv
expect_out "proj('species', kind=\"species\")" "subject,species,kind
m1,mouse,mouse
m2,mouse,mouse
r1,rat,rat" djc fetch "Subject.proj('species', kind=\"species\")" --format csv
expect_out "proj(..., '-species')" "subject,weight
m1,20
m2,22
r1,300" djc fetch "Subject.proj('...', '-species')" --format csv
expect_out "aggr(Trial, n='count(*)', total='sum(duration)')" "subject,n,total
m1,3,9
m2,0,
r1,1,8" djc fetch "Subject.aggr(Trial, n='count(*)', total = 'sum(duration)')" --format csv
expect_out "U('species').aggr(..., n='count(distinct subject)')" "species,n
mouse,2
rat,1" djc fetch "U('species').aggr(Subject, n='count(distinct subject)')" --format csv
expect_out "top(2, 'duration desc, trial')" "subject,session,trial,duration
m1,2,1,6
r1,1,1,8" djc fetch "Trial.top(2, 'duration desc, trial')" --format csv
expect_out "a join with a renamed projection, quoted" "subject,session,trial,label
m1,1,1,a
m1,1,2,a" djc fetch "Trial * Session.proj(label='note') & {\"label\": \"a\"}" --format csv --attrs subject,session,trial,label
expect_fail 2 "an unterminated quote in a call" "^djc: expression: unterminated quote in the call at column 20 of: " \
	djc fetch "Session.proj(label='note)"
}
tcase dj_quotes

# dj.Top: B.top(N, order, offset=M), a restriction usable inside others
case_top() {
expect_out "Trial.top(2, duration desc)" "subject,session,trial,duration
m1,2,1,6
r1,1,1,8" djc fetch 'Trial.top(2, duration desc)' --format csv
expect_out "Session & Trial.top(1, duration)" "subject,session
m1,1" djc fetch 'Session & Trial.top(1, duration)' --attrs subject,session --format csv
expect_out "... offset" "m1,1,2,2" sh -c '"$DJC" fetch "Trial.top(1, duration, offset=1)" --format csv | tail -n +2'
expect_out "... one statement" "1" sh -c '"$DJC" fetch "Session & Trial.top(1, duration)" --explain | grep -c "LIMIT 1"'
}
tcase top

# a delete restricted by a subquery on its own table (MySQL's error 1093
# where the subquery reads the DELETE's table; MariaDB 10.3+ takes it)
case_self_delete() {
expect_out "delete 'T & (T & ...)' --dry-run" "would delete 1 row from Trial" \
	djc delete 'Trial & (Trial & "duration > 7").proj()' --dry-run
expect_out "delete 'T & (T & ...)'" "deleted 1 row from Trial" djc delete 'Trial & (Trial & "duration > 7").proj()' --yes
expect_out "delete 'T - (T & ...)'" "deleted 2 rows from Trial" djc delete 'Trial - (Trial & {"trial": 2}).proj()' --yes
expect_out "... the row left" "m1,1,2,2" sh -c '"$DJC" fetch Trial --format csv | tail -n +2'
}
tcase self_delete

# A delete restricted by its own descendants (DataJoint's K & (C & cond)):
# the rows are chosen before the cascade deletes the rows they are chosen
# by. Before, the children went first and then the restriction chose
# nothing: "deleted 4 rows from DcC, deleted 0 rows from DcK", where the dry
# run had said 2 rows of DcK.
case_delete_by_child() {
cat > dc.djc <<'P'
DcK (manual)
    dk : int32
    ---
    v : int32

DcC (manual)
    -> DcK
    dc : int32
    ---
    w : int32

DcG (manual)
    -> DcC
    g : int32
    ---
P
djc declare dc.djc >/dev/null
printf '%s\n' '{"dk":1,"v":1}' '{"dk":2,"v":2}' '{"dk":3,"v":3}' '{"dk":4,"v":4}' | djc insert DcK >/dev/null
printf '%s\n' '{"dk":1,"dc":1,"w":1}' '{"dk":1,"dc":2,"w":2}' '{"dk":2,"dc":1,"w":2}' '{"dk":2,"dc":2,"w":4}' \
	'{"dk":3,"dc":1,"w":3}' | djc insert DcC >/dev/null
printf '%s\n' '{"dk":1,"dc":2,"g":1}' '{"dk":3,"dc":1,"g":1}' | djc insert DcG >/dev/null
expect_out "K & (C & cond) --dry-run" "would delete 1 row from DcG
would delete 4 rows from DcC
would delete 2 rows from DcK" djc delete 'DcK & (DcC & "w < 3")' --dry-run
expect_out "K & (C & cond) deletes what the dry run said" "deleted 1 row from DcG
deleted 4 rows from DcC
deleted 2 rows from DcK" djc delete 'DcK & (DcC & "w < 3")' --yes
expect_out "... the rows left" "dk,v
3,3
4,4" djc fetch DcK --format csv
expect_out "K & G (a grandchild)" "deleted 1 row from DcG
deleted 1 row from DcC
deleted 1 row from DcK" djc delete 'DcK & DcG' --yes
expect_out "K - C (no children: none to choose by)" "deleted 1 row from DcK" djc delete 'DcK - DcC' --yes
expect_out "nothing left" "0 0 0" sh -c 'for t in DcK DcC DcG; do "$DJC" fetch $t --format json | grep -c . ; done | tr "\n" " " | sed "s/ $//"'
}
tcase delete_by_child

# sum, avg, min and max of a bool attribute (DataJoint's
# U('species').aggr(Subject, n_active='sum(active)')): the same numbers on
# every backend. PostgreSQL's boolean has none of these functions (before
# December 2026: exit 1, "function sum(boolean) does not exist"); djc
# aggregates it as a number there, as MariaDB's tinyint and SQLite's
# integer are.
case_bool_aggr() {
cat > fl.djc <<'P'
Grp (manual)
    grp : varchar(8)
    ---

Flag (manual)
    fk : int32
    ---
    -> Grp
    on : bool
P
djc declare fl.djc >/dev/null
printf '%s\n' '{"grp":"a"}' '{"grp":"b"}' '{"grp":"c"}' | djc insert Grp >/dev/null
printf '%s\n' '{"fk":1,"grp":"a","on":true}' '{"fk":2,"grp":"a","on":true}' '{"fk":3,"grp":"a","on":false}' \
	'{"fk":4,"grp":"b","on":false}' '{"fk":5,"grp":"a","on":false}' | djc insert Flag >/dev/null
expect_out "sum, min, max, avg and count of a bool per group" '{"grp":"a","n_on":2,"lo":false,"hi":true,"share":0.5,"n":4}
{"grp":"b","n_on":0,"lo":false,"hi":false,"share":0,"n":1}' \
	djc fetch 'U(grp).aggr(Flag, n_on=sum(on), lo=min(on), hi=max(on), share=avg(on), n=count(on))' --format jsonl
expect_out "restricted by the sum" '{"grp":"a","n_on":2}' \
	djc fetch 'U(grp).aggr(Flag, n_on=sum(on)) & "n_on > 1"' --format jsonl
expect_out "a table's aggregation of a bool (c: no flags)" '{"grp":"a","n_on":2,"hi":true}
{"grp":"b","n_on":0,"hi":false}
{"grp":"c","n_on":null,"hi":null}' djc fetch 'Grp.aggr(Flag, n_on=sum(on), hi=max(on))' --format jsonl
}
tcase bool_aggr

# --attrs KEY: the primary key's attributes (DataJoint's fetch('KEY'),
# fetch('KEY', 'n_trials')); an attribute named twice is refused (before
# December 2026 the printed heading had room for each attribute once and a
# longer repetition overran it: "corrupted size vs. prev_size", exit 134)
case_attrs_key() {
expect_out "--attrs KEY" "subject,session
m1,1
m1,2" djc fetch 'Session & {"subject": "m1"}' --attrs KEY --format csv
expect_out "--attrs with KEY after another attribute" '{"n_trials":2,"subject":"m1","session":1}' \
	djc fetch 'Session * Stats' --attrs n_trials,KEY --order-by 'n_trials desc, KEY' --limit 1 --format jsonl
expect_out "KEY of an aggregation, one row" '{"subject":"m1"}' \
	djc fetch 'Subject.aggr(Session, n=count()) & "n > 1"' --attrs KEY --fetch1 --format json
expect_fail 2 "an attribute named twice" "^djc: attributes 'subject,species,subject': 'subject' is named twice$" \
	djc fetch Subject --attrs subject,species,subject
expect_fail 2 "... many times" "'subject' is named twice" djc fetch Subject --attrs subject,subject,subject,subject,subject,subject,subject,subject
expect_fail 2 "... by KEY and by name" "'subject' is named twice" djc fetch Session --attrs KEY,subject
}
tcase attrs_key

finish
