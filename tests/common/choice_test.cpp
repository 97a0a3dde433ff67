// common/choice.hpp and JsonNode::as_choice: one word among a list of names, with one message
// for a word that is none of them.
#include <doctest/doctest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/choice.hpp"
#include "common/json_input.hpp"

namespace {

using namespace luwu;

enum class Colour { Red, Green, Blue };
const Choices<Colour> kColours = {{"red", Colour::Red}, {"green", Colour::Green}, {"blue", Colour::Blue}};

std::string invalid_argument_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("edit distance and the nearest name") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);  // k->s, e->i, +g
  CHECK(edit_distance("fp18", "fp16") == 1);
  // Within 2 edits, or a third of the word for long words; the first of equally near names.
  CHECK(nearest_key("gren", {"red", "green", "blue"}) == "green");
  CHECK(nearest_key("zzzzz", {"red", "green", "blue"}).empty());
  CHECK(nearest_key("ab", {"ax", "ay"}) == "ax");
  CHECK(nearest_key("abcdefghijkl", {"abcdefghwxyz"}) == "abcdefghwxyz");  // 4 edits, 12 / 3 = 4
  CHECK(nearest_key("abcdefghijk", {"abcdefgwxyz"}).empty());               // 4 edits, 11 / 3 = 3
  CHECK(did_you_mean("gren", {"red", "green"}) == " (did you mean \"green\"?)");
  CHECK(did_you_mean("zzzzz", {"red", "green"}).empty());
}

TEST_CASE("alternatives are quoted and joined with commas and a final \"or\"") {
  CHECK(quoted_alternatives({}).empty());
  CHECK(quoted_alternatives({"a"}) == "\"a\"");
  CHECK(quoted_alternatives({"a", "b"}) == "\"a\" or \"b\"");
  CHECK(quoted_alternatives({"a", "b", "c"}) == "\"a\", \"b\" or \"c\"");
}

TEST_CASE("choose returns the named value, in any position of the list") {
  CHECK(choose("red", kColours, "colour") == Colour::Red);
  CHECK(choose("green", kColours, "colour") == Colour::Green);
  CHECK(choose("blue", kColours, "colour") == Colour::Blue);
  CHECK(choice_index("blue", {"red", "green", "blue"}, "colour") == 2);
  CHECK(choice_index("red", {"red", "green", "blue"}, "colour") == 0);
}

TEST_CASE("an unknown word names the noun, suggests the nearest name and lists them all") {
  CHECK(invalid_argument_of([] { choose("gren", kColours, "colour"); }) ==
        "unknown colour \"gren\" (did you mean \"green\"?); expected \"red\", \"green\" or \"blue\"");
  // Nothing close: no suggestion, still the list.
  CHECK(invalid_argument_of([] { choose("purple", kColours, "colour"); }) ==
        "unknown colour \"purple\"; expected \"red\", \"green\" or \"blue\"");
  // Names are matched exactly: case and surrounding space matter.
  CHECK(invalid_argument_of([] { choice_index("Red", {"red", "green"}, "colour"); }) ==
        "unknown colour \"Red\" (did you mean \"red\"?); expected \"red\" or \"green\"");
  CHECK_THROWS_AS(choose(" red", kColours, "colour"), std::invalid_argument);
  CHECK_THROWS_AS(choose("", kColours, "colour"), std::invalid_argument);
}

TEST_CASE("JsonNode::as_choice fails at the node's file and JSON path") {
  const Json doc = Json::parse(R"({"paint": {"colour": "bleu", "shade": 3}, "ok": "blue"})");
  const JsonNode root(doc, "paint.json");
  CHECK(root.at("ok").as_choice(kColours, "colour") == Colour::Blue);
  CHECK(root.at("ok").as_choice_index({"red", "green", "blue"}, "colour") == 2);
  try {
    root.at("paint").at("colour").as_choice(kColours, "colour");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == "paint.json");
    CHECK(e.json_path() == "$.paint.colour");
    CHECK(std::string(e.what()) ==
          "paint.json: at $.paint.colour: unknown colour \"bleu\" (did you mean \"blue\"?); expected \"red\", "
          "\"green\" or \"blue\"");
  }
  // Not a string at all: the type error, at the same node.
  try {
    root.at("paint").at("shade").as_choice(kColours, "colour");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.json_path() == "$.paint.shade");
    CHECK(std::string(e.what()).find("expected a string, found number") != std::string::npos);
  }
}

TEST_CASE("only_keys suggests the nearest known key with the same words") {
  const Json doc = Json::parse(R"({"colur": "red"})");
  try {
    JsonNode(doc, "paint.json").only_keys({"colour", "shade"});
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.json_path() == "$.colur");
    CHECK(std::string(e.what()) == "paint.json: at $.colur: unknown field \"colur\" (did you mean \"colour\"?)");
  }
}

TEST_CASE("an input error quotes a huge bad value by its ends, with the file and path in full") {
  // A 50 MB string in a field was echoed into a 50 MB message.
  const std::string value(50'000'000, 'x');
  const luwu::InputError e("big.json", "$.model", "unknown model \"" + value + "\"; did you mean gpt3-175b?");
  const std::string what = e.what();
  CHECK(what.size() < 2200);
  CHECK(what.rfind("big.json: at $.model: unknown model \"xxx", 0) == 0);
  CHECK(what.find("bytes left out") != std::string::npos);
  CHECK(what.find("did you mean gpt3-175b?") != std::string::npos);  // the end survives
  CHECK(std::string(luwu::InputError("f", "", "short").what()) == "f: short");
}
