"""Reading documents without a model: sentences, names, and the name a question asks for."""

from __future__ import annotations

from kgteam.protocols.evidence import EvidenceDocument
from kgteam.roles.adaptive.reading import answer_candidates, names_in, question_names, sentences, supported_by

DOC = EvidenceDocument(id="d1", title="The Silent Harbour", text=(
    "The Silent Harbour (1931 film). Directed by D. W. Griffith. Cast: Mara Quell, Tobias Fenn.\n\n"
    "Ilse (Mara Quell) keeps the lighthouse with her father. Jonas (Tobias Fenn), a smuggler, lands at night. "
    "Mr. Brandt warns Ilse about him."))


def test_sentences_do_not_break_at_initials_or_titles():
    assert "Directed by D. W. Griffith." in sentences(DOC.text)
    assert "Mr. Brandt warns Ilse about him." in sentences(DOC.text)


def test_a_single_capitalised_word_opening_a_sentence_is_not_a_name():
    assert [n.text for n in names_in("After the storm, Jonas Fenn rows out.")] == ["Jonas Fenn"]
    assert [n.text for n in names_in("Directed by D. W. Griffith.")] == ["D. W. Griffith"]


def test_question_names_split_at_everyday_words():
    assert question_names("Who plays Ilse in The Silent Harbour?") == ["Ilse", "The Silent Harbour"]


def test_the_name_beside_the_questions_words_wins():
    assert answer_candidates("Who plays Ilse in The Silent Harbour?", [DOC])[0].text == "Mara Quell"
    assert answer_candidates("Which actor is Jonas in The Silent Harbour?", [DOC])[0].text == "Tobias Fenn"
    assert answer_candidates("Who directed The Silent Harbour?", [DOC])[0].text == "D. W. Griffith"


def test_names_the_question_writes_are_never_answers():
    texts = [c.text for c in answer_candidates("Who plays Ilse in The Silent Harbour?", [DOC], limit=10)]
    assert "Ilse" not in texts and "The Silent Harbour" not in texts


def test_a_document_about_something_else_offers_nothing():
    other = EvidenceDocument(id="d2", title="Other", text="Paul Brenn sails to Oslo with Karin Vos.")
    assert answer_candidates("Who plays Ilse in The Silent Harbour?", [other]) == []


def test_support_is_word_for_word():
    assert supported_by("Mara Quell", [DOC]) is DOC
    assert supported_by("Mara Quelling", [DOC]) is None


def test_a_possessive_names_its_owner():
    assert question_names("Where does Sabine Rook's apprentice work?") == ["Sabine Rook"]


NOTE = EvidenceDocument(id="n1", title="The Hunchback of Notre Dame", text=(
    "# The Hunchback of Notre Dame\n\n"
    "The Hunchback of Notre Dame of 1939 was directed by William Dieterle for RKO.\n\n"
    "Charles Laughton plays Quasimodo, the deaf bell-ringer of the cathedral. Maureen O'Hara, in her\n"
    "first American film, plays Esmeralda, the young Romani dancer whom Quasimodo shelters in the tower.\n"))
ESMERALDA = "Who plays Esmeralda in The Hunchback of Notre Dame?"


def test_a_line_wrapped_inside_a_sentence_stays_one_sentence():
    assert ("Maureen O'Hara, in her first American film, plays Esmeralda, the young Romani dancer whom Quasimodo "
            "shelters in the tower.") in sentences(NOTE.text)
    assert sentences("Cast: Mara Quell\nDirector: Tobias Fenn") == ["Cast: Mara Quell", "Director: Tobias Fenn"]


def test_a_document_that_names_another_value_where_it_says_what_is_asked_contests_the_answer():
    from kgteam.roles.adaptive.reading import contested_by

    assert "Maureen O'Hara" in contested_by(ESMERALDA, ["Charles Laughton"], [NOTE])
    assert contested_by(ESMERALDA, ["Maureen O'Hara"], [NOTE]) == []
    assert contested_by("Who directed The Hunchback of Notre Dame?", ["Anyone"], [NOTE]) == []  # the title only


def test_a_contested_answer_is_not_grounded_at_full_confidence():
    from kgteam.protocols.evidence import Evidence
    from kgteam.protocols.payloads import AnswerValue, Draft
    from kgteam.roles.adaptive.answer_grader import AnswerGrader

    def final(label):
        draft = Draft(question=ESMERALDA, text=f"{label} (from The Hunchback of Notre Dame).",
                      values=[AnswerValue(label=label)], evidence=Evidence(documents=[NOTE]), confidence=1.0)
        return AnswerGrader.final(draft, True)

    wrong = final("Charles Laughton")
    assert wrong.status == "answered" and not wrong.grounded and wrong.confidence <= 0.5
    assert "Maureen O'Hara" in wrong.text
    right = final("Maureen O'Hara")
    assert right.grounded and right.confidence == 1.0
