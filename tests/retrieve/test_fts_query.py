"""fts.build_query: a free-text query → FTS5 MATCH text (words) + trigrams (CJK) + substrings."""

from __future__ import annotations

from memoryd.store.fts import STOPWORDS, build_query, has_cjk, quote_term, word_terms


def test_stopwords_dropped() -> None:
    # what/is/the/user/s are stop words; "user's" splits into user + s
    q = build_query("What is the user's favourite editor?")
    assert q.terms == ["favourite", "editor"]
    assert q.words == '"favourite" OR "editor"'
    assert q.trigrams is None
    assert q.substrings == []
    assert not q.empty


def test_only_stopwords_is_empty() -> None:
    q = build_query("What is it that you were doing?")
    assert q.terms == []
    assert q.words is None
    assert q.empty


def test_empty_text() -> None:
    q = build_query("")
    assert q.empty
    assert (q.words, q.trigrams, q.substrings, q.terms) == (None, None, [], [])


def test_lowercased_and_deduplicated_in_order() -> None:
    assert word_terms("Rust rust RUST Python rust") == ["rust", "python"]


def test_single_digits_dropped_longer_numbers_kept() -> None:
    # "3" is one digit (dropped); "3.12" → "3" + "12"; "2024" kept
    assert word_terms("python 3 version 3.12 in 2024") == ["python", "version", "12", "2024"]


def test_fts_syntax_isquote_termd_not_interpreted() -> None:
    # AND / OR are stop words once lower-cased; NEAR, column filters, prefix stars,
    # minus signs and parentheses lose their meaning: only quoted words remain
    q = build_query('C++ AND "rust" OR NEAR(vim) -emacs* col:value ^start')
    assert q.terms == ["c", "rust", "near", "vim", "emacs", "col", "value", "start"]
    assert q.words == ('"c" OR "rust" OR "near" OR "vim" OR "emacs" OR "col" OR "value" OR "start"')


def test_identifiers_with_underscores_stay_whole() -> None:
    assert build_query("ERR_CONN_RESET my_var").words == '"err_conn_reset" OR "my_var"'


def testquote_term_escapes_doublequote_terms() -> None:
    assert quote_term("vim") == '"vim"'
    assert quote_term('say "hi"') == '"say ""hi"""'


def test_stopword_list_has_seed_noise_words() -> None:
    assert {"the", "and", "or", "user", "users"} <= STOPWORDS
    assert "near" not in STOPWORDS


def test_cjk_run_to_trigrams() -> None:
    # 我喜欢喝咖啡 (6 chars) → 6 - 3 + 1 = 4 trigrams
    q = build_query("我喜欢喝咖啡")
    assert q.terms == []
    assert q.words is None
    assert q.trigrams == '"我喜欢" OR "喜欢喝" OR "欢喝咖" OR "喝咖啡"'
    assert q.substrings == []


def test_cjk_exactly_three_chars() -> None:
    assert build_query("编辑器").trigrams == '"编辑器"'


def test_short_cjk_run_to_substring() -> None:
    q = build_query("咖啡")
    assert q.trigrams is None
    assert q.substrings == ["咖啡"]
    assert q.words is None
    assert not q.empty


def test_single_cjk_char_to_substring() -> None:
    assert build_query("茶").substrings == ["茶"]


def test_mixed_latin_and_cjk() -> None:
    # runs: 东京 (2 → substring), 旅行计划 (4 → 旅行计, 行计划); words: tower
    # latin terms of ≥ 3 letters are added to the trigram query too
    q = build_query("东京 tower 旅行计划")
    assert q.terms == ["tower"]
    assert q.words == '"tower"'
    assert q.trigrams == '"旅行计" OR "行计划" OR "tower"'
    assert q.substrings == ["东京"]


def test_short_latin_terms_not_in_trigrams() -> None:
    # "vi" has 2 letters: cannot match a trigram index
    q = build_query("vi 编辑器")
    assert q.words == '"vi"'
    assert q.trigrams == '"编辑器"'


def test_cjk_glued_to_latin_is_split() -> None:
    # 用vim编辑 → runs 用 (substring), 编辑 (substring); vim is a word
    q = build_query("用vim编辑")
    assert q.terms == ["vim"]
    assert q.substrings == ["用", "编辑"]
    # no CJK trigram, but vim (3 letters) joins the trigram query
    assert q.trigrams == '"vim"'


def test_repeated_trigrams_deduplicated() -> None:
    # 哈哈哈哈 → 哈哈哈, 哈哈哈 → one
    assert build_query("哈哈哈哈").trigrams == '"哈哈哈"'


def test_japanese_kana_and_korean() -> None:
    # katakana incl. the prolonged sound mark ー (U+30FC): コーヒー → コーヒ, ーヒー
    assert build_query("コーヒー").trigrams == '"コーヒ" OR "ーヒー"'
    # hangul 커피를 (3 syllables) → one trigram
    assert build_query("커피를").trigrams == '"커피를"'


def test_has_cjk() -> None:
    assert has_cjk("hello 世界")
    assert has_cjk("カタカナ")
    assert has_cjk("한국어")
    assert not has_cjk("hello world")
    assert not has_cjk("café naïve")
