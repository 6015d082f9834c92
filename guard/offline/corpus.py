"""Each rule's examples: answers it must fire on (with the basis it must decide with) and
answers it must not, each judged whole by the real :class:`~guard.offline.OfflineJudge`
(``tests/unit/test_offline_corpus.py``). :mod:`guard.offline.registry` attaches them to its
rules by name; ``docs/rules.md`` shows the first of each.

Most come from the comments and docstrings of the checks they exercise (the examples those
modules were written against).

Why one module of this length: data, one entry per rule, in the registry's order.
"""

from __future__ import annotations

from guard.offline.rules import Example as E

Corpus = tuple[tuple[E, ...], tuple[E, ...]]  # (fires, passes)
NONE: Corpus = ((), ())

HOURS = "Office hours: 8am to 6pm, Monday to Friday."
SAVINGS = "Easy Saver: 3.1% AER variable. Fixed Saver 1 Year: 4.2% AER fixed."
TRAINS = "The express train to the airport takes 55 minutes. The metro takes 25 minutes."
CLINICS = (
    "Tuesday: Dr Patel's clinic runs 09:00 to 17:00. "
    "Thursday: the late clinic runs from 12:00 until 21:00."
)
MALLS = (
    "Riverside Mall is the largest shopping centre in the county. Northgate Centre is the "
    "second-largest shopping centre in the county."
)
SHOWS = (
    "The Night Shift is a 2019 British sitcom starring Mina Rao and Owen Pike. Rao also "
    "hosts the quiz show Final Answer."
)
ROOMS = " ".join(f"Room {n} is free." for n in range(1, 50))  # more claims than are read
FILM = (
    "Northlight is a 2011 drama film directed by Mara Olsen and written by Tomas Berg, "
    "based on a novel by Ines Kahl. It was shot in Tromsø."
)
PRIZE = (
    "Lena Ortiz (born 1961) is a Chilean poet. In 2009 she was awarded the Hallberg Prize "
    "for poetry. Marco Feld (born 1958) is an Austrian novelist and translator."
)
PRIZE_Q = "Who was awarded the Hallberg Prize, Lena Ortiz or Marco Feld?"
CONTROLLER = (
    "The data controller is Northwind Retail Ltd, registered in England. We use Stripe "
    "Payments Europe Ltd as a payment processor."
)
APPROVALS = (
    "Approvals. Expense claims are approved by your cost-centre manager. Overtime must be "
    "signed off in advance by your shift supervisor."
)
CAST = "Glass Harbour is a 2016 thriller starring Mara Quint and Ivo Brandt."

CORPUS: dict[str, Corpus] = {
    "refusal": (
        (E("I couldn't find that information in the documents.", HOURS),),
        (E("The office opens at 8am.", HOURS),),
    ),
    "direction": (
        (E("The price has gone up from 100 to 75 euros.", "The price fell from 100 to 75 euros."),),
        (
            E(
                "The price has gone down from 100 to 75 euros.",
                "The price fell from 100 to 75 euros.",
            ),
        ),
    ),
    "quote": (
        (E('The error says "disk quota exceeded".', "The error reads: permission denied."),),
        (E('The error says "permission denied".', "The error reads: permission denied."),),
    ),
    "time": (
        (
            E("The office is open 8am to 8pm.", HOURS, basis="time_contradicted"),
            E("The shop opens at 9:30.", "The shop is open every Monday.", basis="time_absent"),
        ),
        (E("The office is open 8am to 6pm.", HOURS),),
    ),
    "weekday": (
        (E("The office is open Monday to Saturday.", HOURS),),
        (E("The office is closed on Sunday.", HOURS),),
    ),
    "number": (
        (
            E(
                "Refunds are issued within 10 business days.",
                "Refunds are issued within 5 business days.",
            ),
            E(
                "Parking costs 45 dollars.",
                "Entry: $30 per adult. Parking is available nearby.",
                basis="number_unaligned",
            ),
            E(
                "The bridge is 900 metres long.",
                "The bridge opened in spring.",
                basis="number_absent",
            ),
        ),
        (
            E("Your total is $40.", "The jacket costs $25 and shipping is $15."),
            # the number rule's exceptions (guard/offline/details.py, _number_failure)
            E("The warranty lasts 3 months.", "The warranty lasts 90 days."),
            E("Version 2.1 adds dark mode.", "v2.1 adds dark mode."),
            E(
                "We offer a half-day tour of the old town.",
                "We offer a half-day guided tour of the old town.",
            ),
            E("There is a monthly fee for the plan.", "The plan costs £25 per month."),
            E("Your flight is LH 902 to Munich.", "Your flight LH902 to Munich departs at 10:15."),
            E(
                "The office is off for four days.",
                "The office is closed from the fourth day of the holiday.",
            ),
            E("The course has 3 modules.", "The course covers statistics, programming and ethics."),
            E(
                "Overtime pays 1.5 times £12, which is £18 an hour.",
                "The hourly rate is £12. Overtime is paid at 1.5 times the hourly rate.",
            ),
            E(
                "Your grade is 68%: 60% of 70 plus 40% of 65.",
                "Coursework counts 60% and the exam 40%. Your coursework mark is 70 and your "
                "exam mark 65.",
            ),
        ),
    ),
    "misplaced": (
        (
            E("The Thursday late clinic runs until 17:00.", CLINICS, basis="time_misplaced"),
            E(
                "The diabetes review clinic is on Monday afternoons with nurse J. Owusu.",
                "Specialist clinics: asthma clinic Monday mornings; diabetes review clinic "
                "Wednesday afternoons with nurse J. Owusu; baby clinic Friday mornings.",
                basis="weekday_misplaced",
            ),
        ),
        (E("The Thursday late clinic runs until 21:00.", CLINICS),),
    ),
    "number_swapped": (
        (E("The express train to the airport takes 25 minutes.", TRAINS),),
        (E("The express train to the airport takes 55 minutes.", TRAINS),),
    ),
    "name": (
        (
            E(
                "The shipment was sent by Rapid Freight Logistics.",
                "The shipment was sent on June 3.",
            ),
            E(
                "He was the Attorney General of California.",
                "He was the Attorney General of Nevada from 2003 to 2007.",
                basis="name_part_absent",
            ),
        ),
        (E("Order 48213 shipped via UPS.", "Order 48213 shipped on June 3 via UPS."),),
    ),
    "name_titled": (
        (E("Frau Kessler leitet die Abteilung.", "Die Abteilung leitet Frau Keller."),),
        (E("Frau Keller leitet die Abteilung.", "Frau Keller leitet die Abteilung."),),
    ),
    "foreign_negation": (
        (
            E(
                "Die Karte kann im Ausland benutzt werden.",
                "Die Karte kann nicht im Ausland benutzt werden.",
            ),
        ),
        (
            E(
                "Die Karte kann nicht im Ausland benutzt werden.",
                "Die Karte kann nicht im Ausland benutzt werden.",
            ),
        ),
    ),
    "foreign_quantifier": (
        (
            E(
                "Alle Zimmer haben einen Balkon.",
                "Einige Zimmer haben einen Balkon.",
            ),
        ),
        (E("Einige Zimmer haben einen Balkon.", "Einige Zimmer haben einen Balkon."),),
    ),
    "foreign_details_found": (
        (E("Der Kurs kostet 30 Euro pro Person.", "The course costs 30 euros per person."),),
        (E("Der Kurs kostet 45 Euro pro Person.", "The course costs 30 euros per person."),),
    ),
    "unreadable": (
        (E("Der Kurs ist sehr beliebt bei den Teilnehmern.", "The course is popular."),),
        (
            E(
                "The course is popular with its students.",
                "The course is popular with its students.",
            ),
        ),
    ),
    "order_reversed": (
        (
            E(
                "The salary review comes before the performance review.",
                "Performance reviews are completed in March. Salary reviews take place in May.",
            ),
        ),
        (
            E(
                "The performance review comes before the salary review.",
                "Performance reviews are completed in March. Salary reviews take place in May.",
            ),
        ),
    ),
    "comparison": (
        (
            E(
                "The Team plan has less storage than the Basic plan.",
                ("Basic plan: 20 GB storage, one user.", "Team plan: 200 GB storage."),
            ),
            E(
                "The part-time MSc costs more per year than the full-time one: £6,200 a year "
                "against £11,400.",
                "Tuition fees, MSc Data Science. Full-time (one year): £11,400. Part-time (two "
                "years): £6,200 per year.",
                basis="comparison_self",
            ),
        ),
        (
            E(
                "The Team plan has more storage than the Basic plan.",
                ("Basic plan: 20 GB storage, one user.", "Team plan: 200 GB storage."),
            ),
        ),
    ),
    "attribution": (
        (
            E(
                "Reviewer 1 pointed out that the sample size is too small.",
                (
                    "Reviewer 1: The paper is well written.",
                    "Reviewer 2: The sample size is too small to support the claims.",
                ),
            ),
        ),
        (
            E(
                "Reviewer 2 pointed out that the sample size is too small.",
                (
                    "Reviewer 1: The paper is well written.",
                    "Reviewer 2: The sample size is too small to support the claims.",
                ),
            ),
        ),
    ),
    "credited": (
        (
            E(
                "The landlord said the boiler would be replaced next week.",
                (
                    "Letting agent: the boiler will be replaced next week.",
                    "Landlord: the rent is due on the first of the month.",
                ),
            ),
        ),
        (
            E(
                "The letting agent said the boiler would be replaced next week.",
                (
                    "Letting agent's email: the boiler will be replaced next week by our engineer.",
                    "Landlord's letter: the rent is due on the first of each month.",
                ),
            ),
        ),
    ),
    "names_apart": (
        (
            E(
                "Stanford University is located in Chestnut Hill, Massachusetts.",
                "Boston College is a private research university in Chestnut Hill, "
                "Massachusetts. Stanford University is a private research university in "
                "Stanford, California.",
            ),
            E(
                "Mina Rao is married to Owen Pike.",
                "Director: Mina Rao. Cast list. Owen Pike plays the lead.",
                basis="names_bridged",
            ),
        ),
        (
            E(
                "You can pay with Visa or Mastercard at the Paris store.",
                "Paris store. We accept Visa and Mastercard. Cash is not accepted.",
                basis="names_apart",
            ),
        ),
    ),
    "unbounded": (
        (E("The laptop has a lifetime warranty.", "The laptop has a 2-year limited warranty."),),
        (E("The laptop has a 2-year warranty.", "The laptop has a 2-year limited warranty."),),
    ),
    "polarity": (
        (
            E(
                "Matching is case-sensitive.",
                "Matching is case-insensitive and ignores accents.",
                basis="opposite",
            ),
            E(
                "Refunds are not issued after the item arrives at our warehouse.",
                "Refunds are issued after the item arrives at our warehouse.",
                basis="negation",
            ),
        ),
        (
            E(
                "Drops aren't covered, and neither are power surges.",
                "The warranty does not cover drops or power surges.",
            ),
            E(
                "Refunds are issued after the item arrives.",
                "Refunds are issued after the item arrives at our warehouse.",
            ),
        ),
    ),
    "clause_polarity": (
        (
            E(
                "Gift cards bought online can be used in our stores.",
                "E-gift cards bought on our website can only be redeemed online; they cannot "
                "be used in our stores.",
            ),
        ),
        (
            E(
                "Damage from floods, fire or theft isn't included.",
                "The policy covers accidental damage and does not cover damage from floods, fire "
                "or theft.",
            ),
            E(
                "You get two notice-free withdrawals a year.",
                "Two withdrawals a year without notice are allowed.",
            ),
        ),
    ),
    "clause_opposite": (
        (
            E(
                "Orion is running behind schedule, unlike Vega, which launched its beta in March.",
                (
                    "Project Orion is two weeks ahead of schedule.",
                    "Project Vega launched its beta in March.",
                ),
            ),
        ),
        (
            E(
                "Orion is running ahead of schedule, unlike Vega, which launched its beta in "
                "March.",
                (
                    "Project Orion is two weeks ahead of schedule.",
                    "Project Vega launched its beta in March.",
                ),
            ),
        ),
    ),
    "predicate_negated": (
        (
            E(
                "Contractors are eligible for the wellness allowance.",
                "Contractors and agency workers are not eligible for the allowance.",
            ),
            E(
                "Purchases through a reseller can be claimed.",
                "Purchases made through third-party resellers cannot be claimed.",
            ),
        ),
        (
            E(
                "The account is active once you verify your email.",
                "The account is not active until you verify your email.",
            ),
        ),
    ),
    "quantifier_limited": (
        (
            E(
                "Every card payment abroad is free.",
                ("Card payments in euro are free. Card payments in other currencies cost 1%.",),
            ),
        ),
        (E("Every order ships free.", ("All orders ship free; most arrive in two days.",)),),
    ),
    "quantifier": (
        (
            E(
                "Deliveries always arrive within two days.",
                "Deliveries usually arrive within two days.",
            ),
        ),
        (
            E(
                "Deliveries usually arrive within two days.",
                "Deliveries usually arrive within two days.",
            ),
        ),
    ),
    "contrary": (
        (
            E(
                "The heated Lakeside pool is open on Sundays.",
                "The heated Lakeside pool has six lanes. On Sundays the Lakeside pool is closed.",
            ),
        ),
        (
            E(
                "The heated Lakeside pool is closed on Sundays.",
                "The heated Lakeside pool has six lanes. On Sundays the Lakeside pool is closed.",
            ),
        ),
    ),
    "name_swapped": (
        (E("The data controller is Stripe Payments Europe Ltd.", CONTROLLER),),
        (E("The data controller is Northwind Retail Ltd.", CONTROLLER),),
    ),
    "agent_swapped": (
        (E("Expense claims are approved by your shift supervisor.", APPROVALS),),
        (E("Expense claims are approved by your cost-centre manager.", APPROVALS),),
    ),
    "denied_stated": (
        (
            E(
                "Wenling is in China, Xinzheng isn't.",
                "Wenling is a city in Zhejiang, China. Xinzheng is a county-level city of "
                "Central China.",
            ),
        ),
        (E("Mara Quint is Dutch, not British.", "Mara Quint is a Dutch actress."),),
    ),
    "unwritten": (
        (
            E(
                "The Night Answer",
                SHOWS,
                "Which sitcom starring Mina Rao aired in 2019?",
                basis="short_name_unwritten",
            ),
            E(
                "the Rao Shift series",
                SHOWS,
                "Which sitcom starring Mina Rao aired in 2019?",
                basis="name_unwritten",
            ),
        ),
        (E("The Night Shift", SHOWS, "Which sitcom starring Mina Rao aired in 2019?"),),
    ),
    "rank_raised": (
        (E("Northgate Centre is the largest shopping centre in the county.", MALLS),),
        (E("Riverside Mall is the largest shopping centre in the county.", MALLS),),
    ),
    "condition_dropped": (
        (
            E(
                "Returns are free.",
                "Returns are free only if you use the prepaid label from your order email.",
            ),
        ),
        (
            E(
                "Returns are free. You must use the prepaid label from your order email.",
                "Returns are free only if you use the prepaid label from your order email.",
            ),
        ),
    ),
    "condition_narrowed": (
        (
            E(
                "The fee is refunded in full if you close your account.",
                "The fee is refunded in full if you close the account within 30 days of the "
                "fee being charged.",
            ),
        ),
        (
            E(
                "The fee is refunded in full if you close the account within 30 days of the fee "
                "being charged.",
                "The fee is refunded in full if you close the account within 30 days of the fee "
                "being charged.",
            ),
        ),
    ),
    "comparison_absent": (
        (
            E(
                "The airport transfer costs a fee, which is cheaper online than at the desk.",
                "The airport transfer costs a fee, payable online or at the desk.",
            ),
        ),
        (
            E(
                "Booking online is cheaper than at the desk.",
                "Booking online is cheaper than paying at the desk.",
            ),
        ),
    ),
    "judgement_absent": (
        (
            E(
                "The street was named after a famous musician.",
                "The street was named after a musician who lived there.",
            ),
        ),
        (
            E(
                "The street was named after a musician.",
                "The street was named after a musician who lived there.",
            ),
        ),
    ),
    "predicate_absent": (
        (
            E(
                "Thomas Harris is a playwright.",
                "Thomas Harris is an American writer, best known for his novels.",
            ),
        ),
        (
            E(
                "Thomas Harris is a writer.",
                "Thomas Harris is an American writer, best known for his novels.",
            ),
        ),
    ),
    "no_content": (
        (E("Yes, and so on.", HOURS),),
        (E("The office opens at 8am.", "Office hours: 8am to 6pm, Monday to Friday."),),
    ),
    "too_many_amounts": (
        (
            E(
                "Fees: " + ", ".join(f"{n} dollars" for n in range(1, 40)) + ".",
                "Fees: " + ", ".join(f"{n} dollars" for n in range(1, 40)) + ".",
            ),
        ),
        (E("Office hours: 8am to 6pm, Monday to Friday.", HOURS),),
    ),
    "rival": (
        (E("3.1% AER", SAVINGS, "What rate does the Fixed Saver pay?"),),
        (E("4.2% AER", SAVINGS, "What rate does the Fixed Saver pay?"),),
    ),
    "short_answer": (
        (
            E("The Night Shift", SHOWS, "Which sitcom starring Mina Rao aired in 2019?"),
            E("Final Answer", SHOWS, "What show does Rao host?"),  # "the quiz show": a show
        ),
        (
            E("a cooking competition", SHOWS, "What show does Rao host?"),
            # a title the evidence gives a thing of another kind than the one asked for: its
            # sentence names Rao, not a sitcom (it passed as short_answer)
            E("Final Answer", SHOWS, "Which sitcom starring Mina Rao aired in 2019?"),
            E("The Night Shift", SHOWS, "What show does Rao host?"),
        ),
    ),
    "answer_absent": (
        (E("a cooking competition", SHOWS, "What show does Rao host?"),),
        (
            E(
                "a quiz show",
                "The Night Shift is a 2019 British sitcom starring Mina Rao and Owen Pike. Rao "
                "also hosts the quiz show Final Answer.",
                "What show does Rao host?",
            ),
        ),
    ),
    "short_answer_unproven": (
        (E("British", SHOWS, "What nationality is the quiz show host?"),),
        (E("The Night Shift", SHOWS, "Which sitcom starring Mina Rao aired in 2019?"),),
    ),
    "verbatim": (
        (E("Office hours: 8am to 6pm, Monday to Friday.", HOURS),),
        (
            E(
                "The office is open from 8am to 6pm on weekdays.",
                "Office hours: 8am to 6pm, Monday to Friday.",
            ),
        ),
    ),
    "aligned": (
        (
            E("The office hours are 8am to 6pm.", HOURS, basis="ordered"),
            E("Monday to Friday, office hours are 8am to 6pm.", HOURS, basis="aligned"),
            E(
                "The room costs $120 a night, so two nights cost $240.",
                "The room costs $120 a night.",
                basis="computed",
            ),
        ),
        (E("The office is open 8am to 8pm.", HOURS),),
    ),
    "near": (
        (
            E(
                "Returns are accepted within 30 days of delivery at any store with the original "
                "paper receipt.",
                "Returns are accepted within 30 days of delivery at any store with the original "
                "receipt.",
            ),
        ),
        (E("The office is open 8am to 8pm.", HOURS),),
    ),
    "scattered": (
        (
            E(
                "The metro to the airport takes 55 minutes.",
                "The metro stops at the museum. The express to the airport takes 55 minutes.",
            ),
        ),
        (E("Office hours: 8am to 6pm, Monday to Friday.", HOURS),),
    ),
    "details_restated": (
        (E("Bring your passport and visa paperwork from 8am.", HOURS),),
        (E("The office is open 8am to 8pm.", HOURS),),
    ),
    "low_support": (
        (E("Parking permits are issued by the council for residents.", HOURS),),
        (E("Office hours: 8am to 6pm, Monday to Friday.", HOURS),),
    ),
    "partial": (
        (E("Office hours are posted online.", HOURS),),
        (E("Office hours: 8am to 6pm, Monday to Friday.", HOURS),),
    ),
    "name_assembled": (
        (
            E(
                "The Rainbow Terrace Estate was built in 1920.",
                "Rainbow Terrace, now known as Lullwater Estate, was built in 1920.",
            ),
        ),
        (
            E(
                "Lullwater Estate was built in 1920.",
                "Rainbow Terrace, now known as Lullwater Estate, was built in 1920.",
            ),
        ),
    ),
    "shared_one_only": (
        (
            E(
                "Both Brava Tacos and Green Bowl are restaurant chains.",
                "Brava Tacos is a restaurant chain founded in Oregon in 1994. Green Bowl is a "
                "salad chain that was started in Austin, Texas in 2009.",
            ),
        ),
        (
            E(
                "Both Brava Tacos and Green Bowl are chains.",
                "Brava Tacos is a restaurant chain founded in Oregon in 1994. Green Bowl is a "
                "salad chain that was started in Austin, Texas in 2009.",
            ),
        ),
    ),
    "slots": (
        (
            E(
                "Gelatine was piloted by a pioneer American aviator and magician.",
                "Gelatine was a balloon piloted by a pioneer American aviator and inventor.",
                "Gelatine was piloted by a pioneer American aviator and what?",
                basis="slot_absent",
            ),
            E(
                "Tomas Berg directed Northlight.",
                FILM,
                "Northlight was directed by whom?",
                basis="slot_misbound",
            ),
        ),
        (E("Mara Olsen directed Northlight.", FILM, "Northlight was directed by whom?"),),
    ),
    "wrong_option": (
        (E("Marco Feld was awarded it.", PRIZE, PRIZE_Q),),
        (E("Lena Ortiz was awarded the Hallberg Prize.", PRIZE, PRIZE_Q),),
    ),
    "doer_misbound": (
        (
            E(
                "Nadia Brel directed Harbour Lights.",
                "Nadia Brel (born 1984) is a Belgian stage and film actress, best known for the "
                "film Harbour Lights. Harbour Lights is a 2011 drama film directed by Pieter "
                "Maes and starring Nadia Brel and Jonas Wirth.",
            ),
        ),
        (
            E(
                "Pieter Maes directed Harbour Lights.",
                "Nadia Brel (born 1984) is a Belgian stage and film actress, best known for the "
                "film Harbour Lights. Harbour Lights is a 2011 drama film directed by Pieter Maes "
                "and starring Nadia Brel and Jonas Wirth.",
            ),
        ),
    ),
    "kind": (
        (
            E(
                "The expert mentor was 12.",
                "She won the championship at the age of 15.",
                "The expert mentor won the championship at what age?",
                basis="kind_mismatch",
            ),
            E(
                "Alf Clausen composed the theme.",
                "Alf Clausen, born in 1941, composed the theme in 1989.",
                "In what year was the creator of the current arrangement born?",
                basis="kind_unanswered",
            ),
        ),
        (
            E(
                "Alf Clausen was born in 1941.",
                "Alf Clausen, born in 1941, composed the theme in 1989.",
                "In what year was the creator of the current arrangement born?",
            ),
        ),
    ),
    "unsupported_addition": (
        (
            E(
                "Returns are accepted within 30 days of delivery. Refunds go back to the "
                "original payment method. Most shoppers adore our cheerful courier partners "
                "everywhere.",
                "Returns are accepted within 30 days of delivery. Refunds go back to the "
                "original payment method within 5 business days.",
            ),
        ),
        (
            E(
                "Your lamp was delivered on 9 April 2026 and lighting products have a 24-month "
                "warranty from delivery, so a fault this winter is still covered.",
                (
                    "Order 5521: desk lamp, delivered 9 April 2026.",
                    "Lighting products carry a 24-month warranty from the delivery date.",
                ),
            ),
        ),
    ),
    "evidence_capped": (
        (
            E(
                "Office hours are 8am to 6pm.",
                "Office hours: 8am to 6pm. " + " ".join(f"Rule {n} applies." for n in range(5001)),
                context_chars=200_000,
            ),
        ),
        (E("Office hours are 8am to 6pm.", HOURS),),
    ),
    "script_numbers": (
        (E("Возврат принимается в течение 90 дней.", "Возврат принимается в течение 30 дней."),),
        (E("Возврат принимается в течение 30 дней.", "Возврат принимается в течение 30 дней."),),
    ),
    "display_reordered": (
        (E("The fee is \u202e03$ si eef ehT.", "The fee is $30."),),
        (E("The fee is $30.", "The fee is $30."),),
    ),
    "refuted": (
        (
            E(
                "The heated Lakeside pool is open on Sundays.",
                "The heated Lakeside pool has six lanes. On Sundays the Lakeside pool is closed.",
                basis="refuted_contrary",
            ),
        ),
        (
            E(
                "Refunds are issued within 10 business days.",
                "Refunds are issued within 5 business days.",
            ),
        ),
    ),
    "unproven": (
        (E("Office hours: 8am to 6pm, Monday to Friday.", HOURS, basis="unproven_verbatim"),),
        (
            E(
                "Refunds are issued within 10 business days.",
                "Refunds are issued within 5 business days.",
            ),
        ),
    ),
    "no_claims": (
        (E("I couldn't find that information in the documents.", HOURS),),
        (E("The office opens at 8am.", HOURS),),
    ),
    "too_long": (
        (E(ROOMS, ROOMS),),
        (E(ROOMS[:100], ROOMS),),
    ),
}
